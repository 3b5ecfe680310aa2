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

export class IdTable {
  private bytes = Buffer.allocUnsafe(64 * 1024);
  private bytesUsed = 0;
  /** ends[p]: where position p's id ends in `bytes`; it starts where p - 1's ends. */
  private ends = new Float64Array(1024);
  /** hashes[p]: the hash of position p's id, kept so growing the table needs no rehash of strings. */
  private hashes = new Uint32Array(1024);
  /** Open-addressing slots holding position + 1; 0 is empty. */
  private slots = new Int32Array(2048);
  private count = 0;

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
