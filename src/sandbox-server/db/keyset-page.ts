import { type AnyColumn, asc, desc, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';

/**
 * Keyset paging over (sort key, id): `page_id` is the id of the first row of the next page and the
 * next query starts at that row's key, compared inside the database. Pages stay exact while rows
 * are added, and no page costs more than its own rows.
 */
export function keysetPage(options: {
  table: PgTable;
  idColumn: AnyColumn;
  sortKey: SQL | AnyColumn;
  descending: boolean;
  pageId: string | undefined;
}): { cursor: SQL | undefined; orderBy: SQL[] } {
  const { table, idColumn, sortKey, descending, pageId } = options;
  const direction = descending ? desc : asc;
  const cursor =
    pageId === undefined
      ? undefined
      : descending
        ? sql`(${sortKey}, ${idColumn}) <= (select ${sortKey}, ${idColumn} from ${table} where ${idColumn} = ${pageId})`
        : sql`(${sortKey}, ${idColumn}) >= (select ${sortKey}, ${idColumn} from ${table} where ${idColumn} = ${pageId})`;
  return { cursor, orderBy: [direction(sortKey), direction(idColumn)] };
}
