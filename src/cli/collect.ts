import { iteratePages, type Page } from '../client/index.js';

/** The first `limit` items of an async sequence (all of them without a limit). */
export async function collect<T>(items: AsyncIterable<T>, limit = Number.POSITIVE_INFINITY): Promise<T[]> {
  const collected: T[] = [];
  if (limit <= 0) return collected;
  for await (const item of items) {
    collected.push(item);
    if (collected.length >= limit) break;
  }
  return collected;
}

/** The first `limit` items of a paged search (all of them without a limit), asking for pages of at most 100. */
export function collectPages<T>(search: (page: { page_id: string | undefined; limit: number }) => Promise<Page<T>>, limit?: number): Promise<T[]> {
  return collect(
    iteratePages((pageId) => search({ page_id: pageId, limit: Math.min(limit ?? 100, 100) })),
    limit,
  );
}
