import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { logger } from '../../logger.js';
import { describeDatabaseFailure } from './connection-errors.js';
import { createResilientClient } from './resilient-client.js';
import * as schema from './schema.js';

const log = logger.child({ component: 'database' });

/** The one database type services and the reconciler use, whichever driver is behind it. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

/** The handle a transaction callback receives; it runs the same queries as Database. */
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * Subscribes to NOTIFY on `channel`; `onNotify` gets each notification's payload, and runs without
 * one after each (re)connection of the listener, since notifications sent while it was away are
 * lost. Resolves to the unsubscribe.
 */
export type Listen = (channel: string, onNotify: (payload?: string) => void) => Promise<() => Promise<void>>;

export interface DatabaseHandle {
  db: Database;
  listen: Listen;
  /** 'postgres' or 'pglite', for logs and /health. */
  driver: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres://... selects PostgreSQL through postgres.js; absent selects embedded PGlite. */
  url?: string;
  /** PGlite data directory; absent means in memory (tests). */
  pgliteDir?: string;
  migrationsFolder?: string;
  /** PostgreSQL only: a query (or transaction) not answered within this long fails as unavailable. */
  queryTimeoutMs?: number;
}

const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
/** The advisory lock (a 64-bit key of our own) held while migrations are applied. */
const MIGRATION_LOCK = 7_215_404_011;

/** Opens the database and applies the drizzle/ migrations, the same ones for both drivers. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const migrationsFolder = options.migrationsFolder ?? findMigrationsFolder();
  if (options.url) {
    const url = options.url;
    // A server that does not answer fails a connection attempt within seconds rather than holding
    // it for postgres.js's default 30 s.
    const connect = (max: number) => postgres(url, { max, connect_timeout: 5, onnotice: () => {} });
    // Migrations may take long and run before anything is served: on a connection of their own,
    // without the query deadline.
    const migrator = connect(1);
    try {
      // Replicas starting together on an empty database would each apply every migration; the
      // lock, held by this session until it ends, lets one at a time look at what is applied.
      await migrator`SELECT pg_advisory_lock(${MIGRATION_LOCK}::bigint)`;
      await migratePostgres(drizzlePostgres(migrator), { migrationsFolder });
    } catch (error) {
      // drizzle says only which statement failed ("Failed query: CREATE SCHEMA ..."); the driver's error says why.
      throw new Error(describeDatabaseFailure(error, url), { cause: error });
    } finally {
      await migrator.end();
    }
    const resilient = createResilientClient({
      connect: () => connect(10),
      deadlineMs: options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
      onReplaced: (reason) => log.warn({ err: reason }, 'database query failed or overran its deadline: connections replaced'),
    });
    const db = drizzlePostgres(resilient.client, { schema });
    // The listener keeps one connection of its own that postgres.js re-establishes (and re-listens
    // on) after it drops; replacing the query pool must not end it.
    const listener = connect(1);
    const listen: Listen = async (channel, onNotify) => {
      const { unlisten } = await listener.listen(channel, (payload) => onNotify(payload), () => onNotify());
      return unlisten;
    };
    return {
      db: db as unknown as Database,
      listen,
      driver: 'postgres',
      close: async () => {
        await Promise.all([resilient.end(), listener.end({ timeout: 5 })]);
      },
    };
  }
  if (options.pgliteDir) await mkdir(options.pgliteDir, { recursive: true });
  const client = options.pgliteDir ? new PGlite(options.pgliteDir) : new PGlite();
  const db = drizzlePglite(client, { schema });
  await migratePglite(db, { migrationsFolder });
  const listen: Listen = async (channel, onNotify) => {
    const unlisten = await client.listen(channel, (payload) => onNotify(payload));
    return () => unlisten();
  };
  return { db: db as unknown as Database, listen, driver: 'pglite', close: () => client.close() };
}

/** drizzle/ sits at the package root, which is a different depth from src/ and from dist/. */
function findMigrationsFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'drizzle');
    if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('drizzle/ migrations folder not found next to the program');
    dir = parent;
  }
}
