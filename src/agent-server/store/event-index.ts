import type { EventFilter } from './event-log.js';
import { IdTable } from './id-table.js';

/** What the index keeps of one stored record; its body stays on disk. */
export interface IndexedRecord {
  id: string;
  kind: string;
  source: string;
  timestampMs: number;
  /** The event's searchable text, or null when `body` filters must never match it. */
  text: string | null;
  /** Byte offset of the record's line in the log file. */
  offset: number;
  /** Byte length of the line, newline included. */
  length: number;
}

export interface Selection {
  /** Matching positions, in the requested order. */
  positions: number[];
  /** The position of the first match after them, when there is one. */
  next: number | undefined;
}

/**
 * The in-memory index of one log: pure, no I/O. Columns are typed arrays indexed by position, so a
 * million events cost a few bytes each and no GC work. `order` holds every position sorted by
 * (timestamp, position), which makes a time range a pair of binary searches and a page a walk of
 * `limit` matches from a known rank: cost follows the page, not the history.
 */
export class EventIndex {
  private readonly ids = new IdTable();
  private readonly kindCodes = new CodeTable();
  private readonly sourceCodes = new CodeTable();
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private times = new Float64Array(1024);
  private kinds = new Uint16Array(1024);
  private sources = new Uint16Array(1024);
  /** textSlots[p]: index into `texts` of p's lower-cased text, or -1 when p has none. */
  private textSlots = new Int32Array(1024);
  private readonly texts: string[] = [];
  private order = new Int32Array(1024);
  private stored = 0;

  get size(): number {
    return this.stored;
  }

  positionOf(id: string): number | undefined {
    return this.ids.positionOf(id);
  }

  idAt(position: number): string {
    return this.ids.idAt(position);
  }

  offsetOf(position: number): number {
    return this.offsets[position]!;
  }

  lengthOf(position: number): number {
    return this.lengths[position]!;
  }

  /** Indexes records at the next positions, in the given order. Ids must be new. */
  add(records: readonly IndexedRecord[]): void {
    const first = this.stored;
    this.ensureCapacity(first + records.length);
    for (const [i, record] of records.entries()) {
      const position = first + i;
      this.ids.push(record.id);
      this.offsets[position] = record.offset;
      this.lengths[position] = record.length;
      this.times[position] = record.timestampMs;
      this.kinds[position] = this.kindCodes.codeOf(record.kind);
      this.sources[position] = this.sourceCodes.codeOf(record.source);
      if (record.text === null) {
        this.textSlots[position] = -1;
      } else {
        this.textSlots[position] = this.texts.length;
        this.texts.push(record.text.toLowerCase());
      }
    }
    this.stored = first + records.length;
    this.insertIntoOrder(first, this.stored);
  }

  /**
   * Up to `limit` matching positions in timestamp order (or its reverse), starting at the rank of
   * position `from` when given (the first event of the page), plus the first match after them.
   */
  select(filter: EventFilter, descending: boolean, limit: number, from?: number): Selection {
    const positions: number[] = [];
    const matches = this.matcher(filter);
    if (!matches) return { positions, next: undefined };
    const [lo, hi] = this.rankRange(filter);
    const order = this.order;
    if (descending) {
      const start = from === undefined ? hi - 1 : Math.min(hi - 1, this.rankOf(from));
      for (let rank = start; rank >= lo; rank--) {
        const position = order[rank]!;
        if (!matches(position)) continue;
        if (positions.length === limit) return { positions, next: position };
        positions.push(position);
      }
    } else {
      const start = from === undefined ? lo : Math.max(lo, this.rankOf(from));
      for (let rank = start; rank < hi; rank++) {
        const position = order[rank]!;
        if (!matches(position)) continue;
        if (positions.length === limit) return { positions, next: position };
        positions.push(position);
      }
    }
    return { positions, next: undefined };
  }

  count(filter: EventFilter): number {
    const [lo, hi] = this.rankRange(filter);
    if (filter.kind === undefined && filter.source === undefined && filter.body === undefined) return hi - lo;
    const matches = this.matcher(filter);
    if (!matches) return 0;
    let total = 0;
    for (let rank = lo; rank < hi; rank++) if (matches(this.order[rank]!)) total++;
    return total;
  }

  /** The predicate of the non-time filters, or null when no event can match (an unseen kind). */
  private matcher(filter: EventFilter): ((position: number) => boolean) | null {
    const kind = filter.kind === undefined ? -1 : this.kindCodes.find(filter.kind);
    const source = filter.source === undefined ? -1 : this.sourceCodes.find(filter.source);
    if (kind === undefined || source === undefined) return null;
    const needle = filter.body?.toLowerCase();
    const { kinds, sources, textSlots, texts } = this;
    return (position) => {
      if (kind >= 0 && kinds[position] !== kind) return false;
      if (source >= 0 && sources[position] !== source) return false;
      if (needle === undefined) return true;
      const slot = textSlots[position]!;
      return slot >= 0 && texts[slot]!.includes(needle);
    };
  }

  /** Ranks [lo, hi) of `order` inside the filter's time range. */
  private rankRange(filter: EventFilter): [number, number] {
    const lo = filter.timestampGte === undefined ? 0 : this.firstRankAtOrAfter(filter.timestampGte);
    const hi = filter.timestampLt === undefined ? this.stored : this.firstRankAtOrAfter(filter.timestampLt);
    return [lo, Math.max(lo, hi)];
  }

  private firstRankAtOrAfter(timestampMs: number): number {
    let lo = 0;
    let hi = this.stored;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[this.order[mid]!]! < timestampMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The rank of an indexed position in `order`. */
  private rankOf(position: number): number {
    let lo = 0;
    let hi = this.stored;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sortsBefore(this.order[mid]!, position)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private sortsBefore(a: number, b: number): boolean {
    const ta = this.times[a]!;
    const tb = this.times[b]!;
    return ta < tb || (ta === tb && a < b);
  }

  /**
   * Adds positions [first, end) to `order`. Live appends carry non-decreasing timestamps and are
   * pushed; older ones (imports) are sorted and merged in from the back, so a batch costs
   * O(k log k) plus the entries after its earliest insertion point, never a full re-sort.
   */
  private insertIntoOrder(first: number, end: number): void {
    const added = Int32Array.from({ length: end - first }, (_, i) => first + i);
    const inOrder = added.every((position, i) => i === 0 || !this.sortsBefore(position, added[i - 1]!));
    if (!inOrder) added.sort((a, b) => this.times[a]! - this.times[b]! || a - b);
    let existing = first - 1;
    if (existing < 0 || !this.sortsBefore(added[0]!, this.order[existing]!)) {
      this.order.set(added, first);
      return;
    }
    let write = end - 1;
    for (let next = added.length - 1; next >= 0; write--) {
      const candidate = added[next]!;
      if (existing >= 0 && this.sortsBefore(candidate, this.order[existing]!)) {
        this.order[write] = this.order[existing--]!;
      } else {
        this.order[write] = candidate;
        next--;
      }
    }
  }

  private ensureCapacity(needed: number): void {
    if (needed <= this.offsets.length) return;
    let capacity = this.offsets.length;
    // 1.5 rather than 2: at a million events each spare slot costs 31 bytes across the columns.
    while (capacity < needed) capacity = Math.ceil(capacity * 1.5);
    this.offsets = resized(this.offsets, new Float64Array(capacity));
    this.lengths = resized(this.lengths, new Uint32Array(capacity));
    this.times = resized(this.times, new Float64Array(capacity));
    this.kinds = resized(this.kinds, new Uint16Array(capacity));
    this.sources = resized(this.sources, new Uint16Array(capacity));
    this.textSlots = resized(this.textSlots, new Int32Array(capacity));
    this.order = resized(this.order, new Int32Array(capacity));
  }
}

type Column = Float64Array | Uint32Array | Uint16Array | Int32Array;

function resized<T extends Column>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** Interns the few distinct kind and source names into 16-bit codes. */
class CodeTable {
  private readonly codes = new Map<string, number>();

  codeOf(name: string): number {
    const known = this.codes.get(name);
    if (known !== undefined) return known;
    if (this.codes.size > 0xffff) throw new RangeError(`More than 65536 distinct values; cannot index "${name}"`);
    this.codes.set(name, this.codes.size);
    return this.codes.size - 1;
  }

  find(name: string): number | undefined {
    return this.codes.get(name);
  }
}
