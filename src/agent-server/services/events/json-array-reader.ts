/**
 * Splits a JSON array arriving in pieces into the text of its elements, without ever holding more
 * than the element being read: each element's text goes to `onElement` (with its index, and how
 * deeply it nests) as soon as its closing comma or bracket arrives, for the caller to parse. The
 * array's own structure (brackets, commas, nothing after it) is checked here; a break in it goes to
 * `onInvalid` and ends the reading. An element's own syntax is the caller's JSON.parse to judge.
 *
 * Scanning counts brackets outside strings, as `jsonTextDepth` does, so the depth of an element is
 * known before anything parses it.
 */
export interface JsonArrayReaderHandlers {
  onElement(text: string, index: number, depth: number): void;
  onInvalid(msg: string, type: 'json_invalid' | 'list_type'): void;
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Phase =
  /** Before the opening bracket. */
  | 'start'
  /** After `[`: an element or `]`. */
  | 'first'
  /** After a comma: an element. */
  | 'next'
  /** Inside an element. */
  | 'element'
  /** After `]`: only whitespace. */
  | 'end'
  /** A structural error was reported: the rest is ignored. */
  | 'failed';

export class JsonArrayReader {
  private phase: Phase = 'start';
  private index = 0;
  /** The part of the current element that came in earlier pieces. */
  private partial = '';
  private depth = 0;
  private deepest = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly handlers: JsonArrayReaderHandlers) {}

  push(text: string): void {
    let elementStart = this.phase === 'element' ? 0 : -1;
    for (let i = 0; i < text.length && this.phase !== 'failed'; i++) {
      const code = text.charCodeAt(i);
      if (this.phase === 'element') {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (code === BACKSLASH) this.escaped = true;
          else if (code === QUOTE) this.inString = false;
        } else if (code === QUOTE) {
          this.inString = true;
        } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
          this.depth++;
          if (this.depth > this.deepest) this.deepest = this.depth;
        } else if ((code === CLOSE_ARRAY || code === CLOSE_OBJECT) && this.depth > 0) {
          this.depth--;
        } else if ((code === COMMA || code === CLOSE_ARRAY) && this.depth === 0) {
          this.finishElement(this.partial + text.slice(elementStart, i));
          this.phase = code === COMMA ? 'next' : 'end';
        }
        continue;
      }
      if (SPACE.has(code)) continue;
      if (this.phase === 'start') {
        if (code === OPEN_ARRAY) this.phase = 'first';
        else this.fail('Input should be a valid list', 'list_type');
      } else if (this.phase === 'end') {
        this.fail('Invalid JSON: unexpected data after the array');
      } else if (code === CLOSE_ARRAY && this.phase === 'first') {
        this.phase = 'end';
      } else if (code === COMMA || code === CLOSE_ARRAY) {
        this.fail(`Invalid JSON: a value is missing before position ${this.index} of the array`);
      } else {
        this.phase = 'element';
        elementStart = i;
        i--;
      }
    }
    if (this.phase === 'element') this.partial += text.slice(elementStart);
  }

  /** The body ended: the array must have been closed. */
  end(): void {
    if (this.phase === 'start') this.fail('Input should be a valid list', 'list_type');
    else if (this.phase !== 'end' && this.phase !== 'failed') this.fail('Invalid JSON: the body ends before the array is closed');
  }

  private finishElement(text: string): void {
    this.handlers.onElement(text, this.index++, this.deepest);
    this.partial = '';
    this.depth = 0;
    this.deepest = 0;
  }

  private fail(msg: string, type: 'json_invalid' | 'list_type' = 'json_invalid'): void {
    this.phase = 'failed';
    this.partial = '';
    this.handlers.onInvalid(msg, type);
  }
}
