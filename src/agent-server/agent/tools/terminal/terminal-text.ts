/**
 * What a terminal shows, as text for the LLM: a PTY ends lines with CR LF and programs write
 * escape sequences (colours, cursor moves, bracketed paste). Sequences are dropped, CR LF becomes
 * LF and a lone CR (a progress bar redrawing its line) starts a new line. Input arrives in chunks,
 * so a sequence or a CR LF cut between two chunks is held back until the next one.
 */

// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other two-character escapes, and C0 controls but tab and newline.
const SEQUENCE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]|\x1b[ -/][@-~]|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;
/** An escape sequence still being received, at the end of a chunk (bounded: a stray ESC is not held forever). */
const UNFINISHED = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]{0,512}|[PX^_][^\x1b]{0,512}|[ -/])?$/;

export class TerminalText {
  #pending = '';

  /** The text of `chunk`, with what may continue in the next chunk held back. */
  push(chunk: string): string {
    let text = this.#pending + chunk;
    this.#pending = '';
    const unfinished = UNFINISHED.exec(text);
    if (unfinished) {
      this.#pending = unfinished[0];
      text = text.slice(0, unfinished.index);
    }
    if (text.endsWith('\r')) {
      this.#pending = `\r${this.#pending}`;
      text = text.slice(0, -1);
    }
    return clean(text);
  }

  /** Whatever was held back, cleaned as it is (the terminal ended). */
  flush(): string {
    const rest = clean(this.#pending);
    this.#pending = '';
    return rest;
  }
}

function clean(text: string): string {
  return text.replace(SEQUENCE, '').replace(/\r+\n/g, '\n').replace(/\r/g, '\n');
}
