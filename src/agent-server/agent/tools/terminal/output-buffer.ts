/**
 * Command output kept for the next observation, bounded: past `limit` characters it keeps the head
 * and the tail and counts what it dropped from the middle. A command that prints gigabytes costs
 * `limit` characters of memory, and the agent still sees how it started and how it ended.
 */
export class OutputBuffer {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  #head = '';
  #tail = '';
  #total = 0;

  constructor(limit: number) {
    this.#headLimit = Math.ceil(limit / 2);
    this.#tailLimit = Math.floor(limit / 2);
  }

  append(text: string): void {
    this.#total += text.length;
    const room = this.#headLimit - this.#head.length;
    if (room > 0) {
      this.#head += text.slice(0, room);
      text = text.slice(room);
    }
    if (text.length > 0) this.#tail = (this.#tail + text).slice(-this.#tailLimit);
  }

  /** The text collected so far (with a note where the middle was cut), and an empty buffer. */
  take(): string {
    const omitted = this.#total - this.#head.length - this.#tail.length;
    const text = omitted === 0 ? this.#head + this.#tail : this.#head + truncationNote(omitted) + this.#tail;
    this.clear();
    return text;
  }

  clear(): void {
    this.#head = '';
    this.#tail = '';
    this.#total = 0;
  }
}

function truncationNote(omitted: number): string {
  return (
    `\n[... ${omitted} characters of output omitted here. ` +
    'To see all of it, redirect the output to a file and read it in parts, e.g. with head, tail or grep.]\n'
  );
}
