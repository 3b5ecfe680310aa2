import { TooManyError } from '../../errors/index.js';

/**
 * How many lifecycle event streams each API key may have open at once in this process
 * (MAX_EVENT_STREAMS_PER_KEY): a caller opening hundreds must not slow the commits of everyone.
 */
export class StreamLimit {
  readonly #max: number;
  readonly #open = new Map<string, number>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Takes a stream of `keyId`'s, or throws TooManyError; the returned function gives it back (once). */
  take(keyId: string): () => void {
    const open = this.#open.get(keyId) ?? 0;
    if (open >= this.#max) {
      throw new TooManyError(`This API key has ${open} lifecycle event streams open, as many as MAX_EVENT_STREAMS_PER_KEY allows; close one first`);
    }
    this.#open.set(keyId, open + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.#open.get(keyId) ?? 1) - 1;
      if (left === 0) this.#open.delete(keyId);
      else this.#open.set(keyId, left);
    };
  }
}
