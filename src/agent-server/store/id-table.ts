/**
 * Event id <-> position, for up to millions of ids without millions of heap objects.
 *
 * A Map<string, number> of 1M UUIDs costs about 85 MB of heap and 140 MB of RSS, and every major GC
 * walks it. Here the ids' UTF-8 bytes sit end to end in one buffer, and an open-addressing hash table
 * of positions (linear probing, at most half full) finds them: about 60 MB for 1M UUIDs, all of it
 * outside the GC'd heap. The trade-off is a string decode to confirm a hit, which costs far less than
 * the disk read that usually follows a lookup.
 */
/** Growth factor of the id arrays: 1.5 leaves at most 50% spare capacity where doubling leaves 100%. */
const GROWTH = 1.5;

/**
 * The parts of an IdTable a checkpoint stores: `bytes` holds the ids, `ends` and `hashes` one entry
 * per id (handed to a table, they may be longer; `ends` and `hashes` equally so).
 */
export interface IdTableState {
  bytes: Uint8Array;
  ends: Float64Array;
  hashes: Uint32Array;
  slots: Int32Array;
}

export class IdTable {
  private bytes: Buffer;
  private bytesUsed: number;
  /** ends[p]: where position p's id ends in `bytes`; it starts where p - 1's ends. */
  private ends: Float64Array;
  /** hashes[p]: the hash of position p's id, kept so growing the table needs no rehash of strings. */
  private hashes: Uint32Array;
  /** Open-addressing slots holding position + 1; 0 is empty. */
  private slots: Int32Array;
  private count: number;

  /** An empty table, or one holding a checkpoint's state (its arrays are taken, not copied). */
  constructor(state?: IdTableState, count = 0) {
    this.bytes = state ? Buffer.from(state.bytes.buffer, state.bytes.byteOffset, state.bytes.byteLength) : Buffer.allocUnsafe(64 * 1024);
    this.ends = state?.ends ?? new Float64Array(1024);
    this.hashes = state?.hashes ?? new Uint32Array(1024);
    this.slots = state?.slots ?? new Int32Array(2048);
    this.count = count;
    this.bytesUsed = count === 0 ? 0 : this.ends[count - 1]!;
    const power = (this.slots.length & (this.slots.length - 1)) === 0;
    if (!power || this.count * 2 > this.slots.length || this.ends.length < count || this.hashes.length !== this.ends.length || this.bytesUsed > this.bytes.length) {
      throw new RangeError('id table state is inconsistent');
    }
  }

  get size(): number {
    return this.count;
  }

  /** Records `id` at the next position (`size`). The caller has checked it is not present. */
  push(id: string): void {
    const position = this.count;
    // A UTF-16 code unit never takes more than 3 UTF-8 bytes.
    this.ensureIdCapacity(position + 1, this.bytesUsed + id.length * 3);
    this.bytesUsed += this.bytes.write(id, this.bytesUsed, 'utf8');
    this.ends[position] = this.bytesUsed;
    const hash = hashOf(id);
    this.hashes[position] = hash;
    this.count = position + 1;
    if (this.count * 2 > this.slots.length) this.growSlots();
    else this.place(position, hash);
  }

  positionOf(id: string): number | undefined {
    const hash = hashOf(id);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === 0) return undefined;
      const position = entry - 1;
      if (this.hashes[position] === hash && this.idAt(position) === id) return position;
    }
  }

  idAt(position: number): string {
    const start = position === 0 ? 0 : this.ends[position - 1]!;
    return this.bytes.toString('utf8', start, this.ends[position]!);
  }

  /**
   * The current state. `bytes`, `ends` and `hashes` only change past the ids already pushed (growing
   * replaces them), so they are shared; `slots` changes in place, so it is copied.
   */
  state(): IdTableState {
    return {
      bytes: this.bytes.subarray(0, this.bytesUsed),
      ends: this.ends.subarray(0, this.count),
      hashes: this.hashes.subarray(0, this.count),
      slots: this.slots.slice(),
    };
  }

  private place(position: number, hash: number): void {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = position + 1;
  }

  private growSlots(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let position = 0; position < this.count; position++) this.place(position, this.hashes[position]!);
  }

  private ensureIdCapacity(ids: number, bytes: number): void {
    if (ids > this.ends.length) {
      const capacity = Math.ceil(this.ends.length * GROWTH);
      this.ends = grow(this.ends, new Float64Array(capacity));
      this.hashes = grow(this.hashes, new Uint32Array(capacity));
    }
    if (bytes > this.bytes.length) {
      const larger = Buffer.allocUnsafe(Math.max(bytes, Math.ceil(this.bytes.length * GROWTH)));
      this.bytes.copy(larger, 0, 0, this.bytesUsed);
      this.bytes = larger;
    }
  }
}

function grow<T extends Float64Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/**
 * FNV-1a over UTF-16 code units, then murmur3's finalizer: the table indexes by the low bits, and
 * ids that share long prefixes (ULIDs of one millisecond) must still land far apart.
 */
function hashOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
