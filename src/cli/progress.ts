import { formatElapsed } from './format.js';
import type { OutputStream } from './output.js';

/**
 * A status line while something comes up. On a terminal it is one line rewritten in place with the
 * elapsed time; otherwise (a log, a pipe) a plain line is written each time the status changes.
 */
export class Progress {
  readonly #stream: OutputStream;
  readonly #startedAt: number;
  readonly #now: () => number;
  #lastText: string | undefined;
  #lineOpen = false;

  constructor(stream: OutputStream, now: () => number = Date.now) {
    this.#stream = stream;
    this.#now = now;
    this.#startedAt = now();
  }

  get elapsedMs(): number {
    return this.#now() - this.#startedAt;
  }

  update(text: string): void {
    if (this.#stream.isTTY) {
      this.#stream.write(`\r\x1b[2K${text} (${formatElapsed(this.elapsedMs)})`);
      this.#lineOpen = true;
    } else if (text !== this.#lastText) {
      this.#stream.write(`${text}\n`);
    }
    this.#lastText = text;
  }

  /** The final line, replacing the rewritten one on a terminal. */
  finish(text: string): void {
    if (this.#lineOpen) this.#stream.write('\r\x1b[2K');
    this.#lineOpen = false;
    this.#stream.write(`${text} (${formatElapsed(this.elapsedMs)})\n`);
  }

  /** Leaves the terminal line as it is and moves below it, before an error is printed. */
  stop(): void {
    if (this.#lineOpen) this.#stream.write('\n');
    this.#lineOpen = false;
  }
}
