import type { EventFilter } from './event-log.js';
import { IdTable, type IdTableState } from './id-table.js';
import { Postings } from './postings.js';
import { TextIndex, type TextIndexState } from './text-index.js';

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

/**
 * Everything an EventIndex holds, as a checkpoint stores it. Taken from an index, arrays hold exactly
 * `size` entries; handed to one, they may be longer (room to grow).
 */
export interface EventIndexState {
  size: number;
  kindNames: string[];
  sourceNames: string[];
  offsets: Float64Array;
  lengths: Uint32Array;
  times: Float64Array;
  kinds: Uint16Array;
  sources: Uint16Array;
  textSlots: Int32Array;
  order: Int32Array;
  ids: IdTableState;
  text: TextIndexState;
}

/** Positions in (timestamp, position) order: `order` itself, or one pair's postings. */
interface SortedList {
  positions: Int32Array;
  size: number;
}

/** A walk of a list: the next index to read, and the index where it stops (exclusive, either way). */
interface Cursor {
  list: SortedList;
  next: number;
  stop: number;
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
 * (timestamp, position), and ./postings the same order per (kind, source) pair. A page walks the
 * lists its filter names (all of `order` when it names none), merging their heads, from the
 * binary-searched start of its time range or of its `page_id`: cost follows the page and the few
 * lists, not the log or the number of matches. `body` is the exception that cannot be listed ahead:
 * a selective one is found through ./text-index and its few matches sorted; a common one is checked
 * on the texts of the walk, where matches are close together.
 */
export class EventIndex {
  private readonly ids: IdTable;
  private readonly kindCodes: CodeTable;
  private readonly sourceCodes: CodeTable;
  private offsets: Float64Array;
  private lengths: Uint32Array;
  private times: Float64Array;
  private kinds: Uint16Array;
  private sources: Uint16Array;
  /** textSlots[p]: p's slot in `text`, or -1 when p has no text. */
  private textSlots: Int32Array;
  private readonly text: TextIndex;
  private order: Int32Array;
  /** The positions of each (kind, source) pair in `order`'s order, derived from the columns. */
  private readonly postings = new Postings();
  private stored: number;

  /** An empty index, or one holding a checkpoint's state (its arrays are taken, not copied). */
  constructor(state?: EventIndexState) {
    const size = state?.size ?? 0;
    this.ids = new IdTable(state?.ids, size);
    this.kindCodes = new CodeTable(state?.kindNames);
    this.sourceCodes = new CodeTable(state?.sourceNames);
    this.text = new TextIndex(state?.text);
    this.offsets = state?.offsets ?? new Float64Array(1024);
    this.lengths = state?.lengths ?? new Uint32Array(1024);
    this.times = state?.times ?? new Float64Array(1024);
    this.kinds = state?.kinds ?? new Uint16Array(1024);
    this.sources = state?.sources ?? new Uint16Array(1024);
    this.textSlots = state?.textSlots ?? new Int32Array(1024);
    this.order = state?.order ?? new Int32Array(1024);
    this.stored = size;
    const columns = [this.offsets, this.lengths, this.times, this.kinds, this.sources, this.textSlots, this.order];
    if (this.ids.size !== size || columns.some((column) => column.length < size)) throw new RangeError('event index state is inconsistent');
    this.rebuildPostings();
  }

  /**
   * The current state, for a checkpoint. Columns only ever change at positions >= size (growing
   * replaces an array, leaving the old one intact), so they are shared; `order` and the parts that
   * change in place are copied, so later appends never alter what was taken.
   */
  state(): EventIndexState {
    const size = this.stored;
    return {
      size,
      kindNames: this.kindCodes.names(),
      sourceNames: this.sourceCodes.names(),
      offsets: this.offsets.subarray(0, size),
      lengths: this.lengths.subarray(0, size),
      times: this.times.subarray(0, size),
      kinds: this.kinds.subarray(0, size),
      sources: this.sources.subarray(0, size),
      textSlots: this.textSlots.subarray(0, size),
      order: this.order.slice(0, size),
      ids: this.ids.state(),
      text: this.text.state(),
    };
  }

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

  /** The lower-cased searchable text of a position, or null when it has none. */
  textOf(position: number): string | null {
    const slot = this.textSlots[position]!;
    return slot < 0 ? null : this.text.textAt(slot);
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
      this.textSlots[position] = record.text === null ? -1 : this.text.add(position, record.text.toLowerCase());
    }
    this.stored = first + records.length;
    if (this.insertIntoOrder(first, this.stored)) {
      for (let rank = first; rank < this.stored; rank++) this.post(this.order[rank]!);
    } else {
      // An import older than stored events lands inside the lists: rare, so they are rebuilt whole.
      this.rebuildPostings();
    }
  }

  /**
   * Up to `limit` matching positions in timestamp order (or its reverse), starting at the rank of
   * position `from` when given (the first event of the page), plus the first match after them.
   */
  select(filter: EventFilter, descending: boolean, limit: number, from?: number): Selection {
    const positions: number[] = [];
    const lists = this.listsFor(filter);
    if (lists.length === 0) return { positions, next: undefined };
    const found = this.bodyMatches(filter);
    if (found) return this.selectAmong(found, filter, descending, limit, from);
    const needle = filter.body?.toLowerCase();
    const cursors = lists.map((list) => this.cursorOf(list, filter, descending, from)).filter((cursor) => cursor.next !== cursor.stop);
    const step = descending ? -1 : 1;
    // A linear pick of the next head: there are a few lists (kinds x sources), a heap would not pay.
    while (cursors.length > 0) {
      let best = 0;
      for (let i = 1; i < cursors.length; i++) {
        const candidate = cursors[i]!;
        const head = candidate.list.positions[candidate.next]!;
        const bestHead = cursors[best]!.list.positions[cursors[best]!.next]!;
        if (this.sortsBefore(head, bestHead) !== descending) best = i;
      }
      const cursor = cursors[best]!;
      const position = cursor.list.positions[cursor.next]!;
      cursor.next += step;
      if (cursor.next === cursor.stop) cursors.splice(best, 1);
      if (needle !== undefined && !this.textHas(position, needle)) continue;
      if (positions.length === limit) return { positions, next: position };
      positions.push(position);
    }
    return { positions, next: undefined };
  }

  count(filter: EventFilter): number {
    const lists = this.listsFor(filter);
    const found = lists.length > 0 ? this.bodyMatches(filter) : undefined;
    if (found) return this.keptAmong(found, filter).length;
    const needle = filter.body?.toLowerCase();
    let total = 0;
    for (const list of lists) {
      const [lo, hi] = this.timeRange(list, filter);
      if (needle === undefined) total += hi - lo;
      else for (let i = lo; i < hi; i++) if (this.textHas(list.positions[i]!, needle)) total++;
    }
    return total;
  }

  /**
   * The sorted lists whose union holds every match of the filter's kind and source: the whole
   * `order` when neither is given (and no body), else the postings of the matching pairs (with
   * text, for a body). None when the filter names a kind or source never stored.
   */
  private listsFor(filter: EventFilter): SortedList[] {
    const codes = this.codesOf(filter);
    if (!codes) return [];
    const { kind, source } = codes;
    if (kind < 0 && source < 0 && filter.body === undefined) return [{ positions: this.order, size: this.stored }];
    return this.postings.matching(kind, source, filter.body !== undefined);
  }

  /** Where a walk of `list` starts and stops for the filter's time range, from the page's first position. */
  private cursorOf(list: SortedList, filter: EventFilter, descending: boolean, from: number | undefined): Cursor {
    let [lo, hi] = this.timeRange(list, filter);
    if (from !== undefined) {
      // The page starts at `from` itself: ascending at the first entry not before it, descending at the last not after it.
      if (descending) hi = Math.min(hi, this.firstIndex(list, (position) => !this.sortsBefore(from, position)));
      else lo = Math.max(lo, this.firstIndex(list, (position) => this.sortsBefore(position, from)));
    }
    if (lo >= hi) return { list, next: 0, stop: 0 };
    return descending ? { list, next: hi - 1, stop: lo - 1 } : { list, next: lo, stop: hi };
  }

  /** Indexes [lo, hi) of `list` inside the filter's time range. */
  private timeRange(list: SortedList, filter: EventFilter): [number, number] {
    const { timestampGte, timestampLt } = filter;
    const times = this.times;
    const lo = timestampGte === undefined ? 0 : this.firstIndex(list, (position) => times[position]! < timestampGte);
    const hi = timestampLt === undefined ? list.size : this.firstIndex(list, (position) => times[position]! < timestampLt);
    return [lo, Math.max(lo, hi)];
  }

  /** The first index of `list` whose position is not `before`: `before` holds for a prefix of the list. */
  private firstIndex(list: SortedList, before: (position: number) => boolean): number {
    let lo = 0;
    let hi = list.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(list.positions[mid]!)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private textHas(position: number, needle: string): boolean {
    const slot = this.textSlots[position]!;
    return slot >= 0 && this.text.textAt(slot).includes(needle);
  }

  /** Every position holding a selective `body`, found through the text index; undefined when there is none to use. */
  private bodyMatches(filter: EventFilter): number[] | undefined {
    return filter.body === undefined ? undefined : this.text.positionsContaining(filter.body.toLowerCase());
  }

  /** Of positions already matching `body`, those matching the rest of the filter. */
  private keptAmong(found: readonly number[], filter: EventFilter): number[] {
    const codes = this.codesOf(filter);
    if (!codes) return [];
    const { kind, source } = codes;
    const { timestampGte, timestampLt } = filter;
    const { kinds, sources, times } = this;
    return found.filter(
      (position) =>
        (kind < 0 || kinds[position] === kind) &&
        (source < 0 || sources[position] === source) &&
        (timestampGte === undefined || times[position]! >= timestampGte) &&
        (timestampLt === undefined || times[position]! < timestampLt),
    );
  }

  /** `select` over a few known matches: sorted directly rather than found by walking `order`. */
  private selectAmong(found: readonly number[], filter: EventFilter, descending: boolean, limit: number, from?: number): Selection {
    let kept = this.keptAmong(found, filter);
    if (from !== undefined) {
      kept = kept.filter((position) => position === from || this.sortsBefore(from, position) !== descending);
    }
    kept.sort((a, b) => (this.sortsBefore(a, b) === descending ? 1 : -1));
    return { positions: kept.slice(0, limit), next: kept[limit] };
  }

  /** The codes of the filter's kind and source (-1: any), or null when it names one never stored. */
  private codesOf(filter: EventFilter): { kind: number; source: number } | null {
    const kind = filter.kind === undefined ? -1 : this.kindCodes.find(filter.kind);
    const source = filter.source === undefined ? -1 : this.sourceCodes.find(filter.source);
    return kind === undefined || source === undefined ? null : { kind, source };
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
   * Answers whether the batch went after every stored position, at ranks [first, end).
   */
  private insertIntoOrder(first: number, end: number): boolean {
    const added = Int32Array.from({ length: end - first }, (_, i) => first + i);
    const inOrder = added.every((position, i) => i === 0 || !this.sortsBefore(position, added[i - 1]!));
    if (!inOrder) added.sort((a, b) => this.times[a]! - this.times[b]! || a - b);
    let existing = first - 1;
    if (existing < 0 || !this.sortsBefore(added[0]!, this.order[existing]!)) {
      this.order.set(added, first);
      return true;
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
    return false;
  }

  private post(position: number): void {
    this.postings.push(this.kinds[position]!, this.sources[position]!, position, this.textSlots[position]! >= 0);
  }

  private rebuildPostings(): void {
    this.postings.clear();
    // Each list sized from a count first: grown by halves, a list copied itself some 30 times on
    // its way to a million positions, most of a restart's rebuild.
    const sourceCount = this.sourceCodes.size;
    const counts = new Int32Array(this.kindCodes.size * sourceCount);
    for (let position = 0; position < this.stored; position++) counts[this.kinds[position]! * sourceCount + this.sources[position]!]!++;
    counts.forEach((count, pair) => {
      if (count > 0) this.postings.reserve(Math.floor(pair / sourceCount), pair % sourceCount, count);
    });
    for (let rank = 0; rank < this.stored; rank++) this.post(this.order[rank]!);
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

  constructor(names: readonly string[] = []) {
    for (const name of names) this.codeOf(name);
  }

  get size(): number {
    return this.codes.size;
  }

  /** Names by code. */
  names(): string[] {
    return [...this.codes.keys()];
  }

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
