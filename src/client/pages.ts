import type { Page } from './types.js';

/** Every item of a paged search, fetching the next page only when the reader gets there. */
export async function* iteratePages<T>(fetchPage: (pageId: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let pageId: string | undefined;
  do {
    const page = await fetchPage(pageId);
    yield* page.items;
    pageId = page.next_page_id ?? undefined;
  } while (pageId !== undefined);
}
