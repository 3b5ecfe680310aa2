/**
 * The positions of each (kind, source) pair of one log, each list in the index's (timestamp,
 * position) order: pure, no I/O. A `kind` or `source` filter reads only the lists of its pairs, so
 * a page costs its own matches however rare they are in the log (walking the whole log in time
 * order and skipping non-matches cost a full scan for a kind that is seldom or never from a source).
 * Lists are typed arrays, a few bytes per event and no GC work; they are derived from the index's
 * columns and never stored in a checkpoint.
 */
export class PostingList {
  /** positions[0..size): in (timestamp, position) order. */
  positions: Int32Array;
  size = 0;
  /** How many of the positions have searchable text: lists with none are skipped by a `body` filter. */
  texts = 0;

  constructor(
    readonly kind: number,
    readonly source: number,
    capacity: number,
  ) {
    this.positions = new Int32Array(Math.max(capacity, 1));
  }

  /** Adds a position that sorts after every position already in the list. */
  push(position: number, hasText: boolean): void {
    if (this.size === this.positions.length) {
      const grown = new Int32Array(Math.ceil(this.size * 1.5));
      grown.set(this.positions);
      this.positions = grown;
    }
    this.positions[this.size++] = position;
    if (hasText) this.texts++;
  }
}

export class Postings {
  /** byKind[kind][source] */
  private byKind: (PostingList | undefined)[][] = [];
  private all: PostingList[] = [];

  /** Adds a position that sorts after every position already in its pair's list. */
  push(kind: number, source: number, position: number, hasText: boolean): void {
    (this.byKind[kind]?.[source] ?? this.add(kind, source, 16)).push(position, hasText);
  }

  /** Makes room in the pair's list, still empty, for `capacity` positions. */
  reserve(kind: number, source: number, capacity: number): void {
    this.add(kind, source, capacity);
  }

  private add(kind: number, source: number, capacity: number): PostingList {
    const list = new PostingList(kind, source, capacity);
    (this.byKind[kind] ??= [])[source] = list;
    this.all.push(list);
    return list;
  }

  /** The lists of every pair matching the codes (-1: any), holding at least one position (or text, with `withText`). */
  matching(kind: number, source: number, withText: boolean): PostingList[] {
    const lists = kind >= 0 ? (this.byKind[kind] ?? []) : this.all;
    const found: PostingList[] = [];
    for (const list of lists) {
      if (list === undefined || (source >= 0 && list.source !== source)) continue;
      if (withText ? list.texts > 0 : list.size > 0) found.push(list);
    }
    return found;
  }

  clear(): void {
    this.byKind = [];
    this.all = [];
  }
}
