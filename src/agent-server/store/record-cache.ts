/**
 * A least-recently-used cache of parsed events by position. A Map iterates in insertion order, so
 * re-inserting on a hit keeps the oldest entry first, where eviction takes it.
 */
export class RecordCache<V> {
  private readonly entries = new Map<number, V>();

  constructor(private readonly capacity: number) {}

  get(position: number): V | undefined {
    const value = this.entries.get(position);
    if (value !== undefined) {
      this.entries.delete(position);
      this.entries.set(position, value);
    }
    return value;
  }

  set(position: number, value: V): void {
    if (this.capacity <= 0) return;
    this.entries.delete(position);
    this.entries.set(position, value);
    if (this.entries.size > this.capacity) {
      this.entries.delete(this.entries.keys().next().value!);
    }
  }
}
