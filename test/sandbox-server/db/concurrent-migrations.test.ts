import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../../src/sandbox-server/db/client.js';
import { installation } from '../../../src/sandbox-server/db/schema.js';
import { createTestDatabase } from '../../helpers/database.js';

const JOURNAL = join(import.meta.dirname, '..', '..', '..', 'drizzle', 'meta', '_journal.json');
const REPLICAS = 4;

/** Control planes starting at once on one empty PostgreSQL database: one applies the migrations, the others find them applied. */
describe.runIf(process.env.DATABASE_URL)('migrations of replicas starting together', () => {
  const opened: DatabaseHandle[] = [];
  let database: { url: string; drop(): Promise<void> } | undefined;
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((handle) => handle.close()));
    await database?.drop();
  });

  it('are applied once, every replica starts, and they read one installation id', async () => {
    const migrations = (JSON.parse(await readFile(JOURNAL, 'utf8')) as { entries: unknown[] }).entries.length;
    for (let round = 0; round < 3; round++) {
      database = await createTestDatabase();
      const url = database.url;
      const results = await Promise.allSettled(Array.from({ length: REPLICAS }, () => openDatabase({ url })));
      opened.push(...results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])));
      expect(results.map((result) => (result.status === 'fulfilled' ? 'opened' : String(result.reason)))).toEqual(Array(REPLICAS).fill('opened'));
      const client = postgres(url, { max: 1 });
      const [applied] = await client<{ count: number }[]>`SELECT count(*)::int AS count FROM drizzle.__drizzle_migrations`;
      await client.end();
      expect(applied?.count).toBe(migrations);
      const ids = await Promise.all(opened.map(async (handle) => (await handle.db.select().from(installation)).map((row) => row.id)));
      expect(new Set(ids.flat()).size).toBe(1);
      expect(ids.every((list) => list.length === 1)).toBe(true);
      await Promise.all(opened.splice(0).map((handle) => handle.close()));
      await database.drop();
      database = undefined;
    }
  }, 120_000);
});
