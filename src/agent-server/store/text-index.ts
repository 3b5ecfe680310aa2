/**
 * The searchable texts of one log (lower-cased, one slot each, in position order) and a filter that
 * finds the few texts holding a selective `body` without reading the rest: pure, no I/O.
 *
 * Texts are grouped in blocks of BLOCK_TEXTS consecutive slots, and each block keeps a Bloom-style
 * bitmap of the character bigrams and trigrams its texts contain. A needle can only be in a block
 * whose bitmap has every one of the needle's n-grams, so a rare word checks a few blocks instead of
 * every text (at 1M events: ~2 ms instead of ~16 ms). Bitmaps give false positives, never false
 * negatives, and every candidate text is checked with `includes`, so answers are exact.
 * The trade-off: 1 KiB per 64 texts, and hashing each text once when it is added.
 */
const BLOCK_TEXTS = 64;
const BLOOM_BITS = 8192;
const BLOOM_WORDS = BLOOM_BITS / 32;
const BLOOM_MASK = BLOOM_BITS - 1;
/** Past this share of candidate blocks the needle is common, and a walk in time order finds a page sooner. */
const SELECTIVE_SHARE = 1 / 8;
/** Checking this many blocks is cheap whatever the share: small logs use the bitmaps too. */
const CHEAP_BLOCKS = 16;

/** The parts of a TextIndex a checkpoint stores. */
export interface TextIndexState {
  texts: string[];
  /** positions[slot]: the log position of the slot's event. */
  positions: Int32Array;
  blooms: Uint32Array;
}

export class TextIndex {
  private texts: string[];
  private positions: Int32Array;
  private blooms: Uint32Array;

  constructor(state?: TextIndexState) {
    this.texts = state?.texts ?? [];
    this.positions = state?.positions ?? new Int32Array(1024);
    this.blooms = state?.blooms ?? new Uint32Array(BLOOM_WORDS * 16);
    const blocks = Math.ceil(this.texts.length / BLOCK_TEXTS);
    if (this.positions.length < this.texts.length || this.blooms.length < blocks * BLOOM_WORDS) {
      throw new RangeError('text index state is inconsistent');
    }
  }

  get size(): number {
    return this.texts.length;
  }

  /** Adds the lower-cased `text` of `position`; returns its slot. */
  add(position: number, text: string): number {
    const slot = this.texts.length;
    if (slot === this.positions.length) this.positions = grown(this.positions, new Int32Array(Math.ceil(slot * 1.5)));
    const base = blockOf(slot) * BLOOM_WORDS;
    if (base + BLOOM_WORDS > this.blooms.length) this.blooms = grown(this.blooms, new Uint32Array(Math.ceil((base + BLOOM_WORDS) * 1.5)));
    this.texts.push(text);
    this.positions[slot] = position;
    const blooms = this.blooms;
    for (let i = 0; i + 1 < text.length; i++) {
      const bigram = bigramHash(text.charCodeAt(i), text.charCodeAt(i + 1));
      setBit(blooms, base, bigram);
      if (i + 2 < text.length) setBit(blooms, base, trigramHash(bigram, text.charCodeAt(i + 2)));
    }
    return slot;
  }

  textAt(slot: number): string {
    return this.texts[slot]!;
  }

  /**
   * Every position whose text contains the lower-cased `needle`, in position order; undefined when
   * the needle is too short or too common for the bitmaps to narrow the search.
   */
  positionsContaining(needle: string): number[] | undefined {
    const bits = needleBits(needle);
    if (bits.length === 0) return undefined;
    const blocks = Math.ceil(this.texts.length / BLOCK_TEXTS);
    const candidates: number[] = [];
    const limit = Math.max(CHEAP_BLOCKS, Math.floor(blocks * SELECTIVE_SHARE));
    const blooms = this.blooms;
    for (let block = 0; block < blocks; block++) {
      const base = block * BLOOM_WORDS;
      let all = true;
      for (const bit of bits) {
        if ((blooms[base + (bit >>> 5)]! & (1 << (bit & 31))) === 0) {
          all = false;
          break;
        }
      }
      if (!all) continue;
      if (candidates.length === limit) return undefined;
      candidates.push(block);
    }
    const positions: number[] = [];
    for (const block of candidates) {
      const end = Math.min(this.texts.length, (block + 1) * BLOCK_TEXTS);
      for (let slot = block * BLOCK_TEXTS; slot < end; slot++) {
        if (this.texts[slot]!.includes(needle)) positions.push(this.positions[slot]!);
      }
    }
    return positions;
  }

  /** The current state; `texts` is a copy and `blooms` too (the last block still changes), `positions` only grows. */
  state(): TextIndexState {
    const blocks = Math.ceil(this.texts.length / BLOCK_TEXTS);
    return {
      texts: this.texts.slice(),
      positions: this.positions.subarray(0, this.texts.length),
      blooms: this.blooms.slice(0, blocks * BLOOM_WORDS),
    };
  }
}

function blockOf(slot: number): number {
  return Math.floor(slot / BLOCK_TEXTS);
}

/** The n-gram bits a text must have to contain `needle`: its trigrams, or its bigram when it has two characters. */
function needleBits(needle: string): number[] {
  if (needle.length < 2) return [];
  if (needle.length === 2) return [bigramHash(needle.charCodeAt(0), needle.charCodeAt(1)) & BLOOM_MASK];
  const bits = new Set<number>();
  for (let i = 0; i + 2 < needle.length; i++) {
    bits.add(trigramHash(bigramHash(needle.charCodeAt(i), needle.charCodeAt(i + 1)), needle.charCodeAt(i + 2)) & BLOOM_MASK);
  }
  return [...bits];
}

function bigramHash(a: number, b: number): number {
  return mix(Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77));
}

function trigramHash(bigram: number, c: number): number {
  return mix(bigram ^ Math.imul(c, 0xc2b2ae3d));
}

function mix(hash: number): number {
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x2c1b3c6d);
  return (hash ^ (hash >>> 12)) >>> 0;
}

function setBit(blooms: Uint32Array, base: number, hash: number): void {
  const bit = hash & BLOOM_MASK;
  blooms[base + (bit >>> 5)]! |= 1 << (bit & 31);
}

function grown<T extends Int32Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
