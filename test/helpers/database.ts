import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { type DatabaseHandle, openDatabase } from '../../src/sandbox-server/db/client.js';
import { registerConfiguredEngines } from '../../src/sandbox-server/engines/register-engines.js';

export type TestDriver = 'pglite' | 'postgres';

const adminUrl = process.env.DATABASE_URL;

if (!adminUrl) {
  if (process.env.CI === 'true') {
    throw new Error('DATABASE_URL is not set: CI must run the PostgreSQL variant of the database tests');
  }
  console.warn('\n*** DATABASE_URL is not set: SKIPPING the PostgreSQL variant of the database tests (PGlite only) ***\n');
}

/** The drivers every database test runs against: both, unless PostgreSQL is unavailable on a dev machine. */
export const testDrivers: TestDriver[] = adminUrl ? ['pglite', 'postgres'] : ['pglite'];

/** The DATABASE_URL server's address, for a test that puts something between it and the client. */
export function testServerAddress(): { host: string; port: number } {
  if (!adminUrl) throw new Error('DATABASE_URL is not set');
  const url = new URL(adminUrl);
  return { host: url.hostname, port: Number(url.port || 5432) };
}

/**
 * A fresh, migrated database of its own, with the engine `local` registered as a control plane
 * without DOCKER_ENGINES registers it: PGlite in memory, or a new `test_<random>` database on
 * the DATABASE_URL server, dropped again by `close()`. `viaPort` reaches that server through
 * another port of this machine (a proxy of the test's); `queryTimeoutMs` is the client's deadline.
 */
export async function openTestDatabase(driver: TestDriver, options: { viaPort?: number; queryTimeoutMs?: number } = {}): Promise<DatabaseHandle> {
  const handle = await openFreshDatabase(driver, options);
  await registerConfiguredEngines(handle.db, undefined, 'unix:///var/run/docker.sock');
  return handle;
}

async function openFreshDatabase(driver: TestDriver, options: { viaPort?: number; queryTimeoutMs?: number }): Promise<DatabaseHandle> {
  if (driver === 'pglite') return openDatabase({});
  const database = await createTestDatabase();
  const url = new URL(database.url);
  if (options.viaPort !== undefined) {
    url.hostname = '127.0.0.1';
    url.port = String(options.viaPort);
  }
  const handle = await openDatabase({ url: url.toString(), queryTimeoutMs: options.queryTimeoutMs });
  return {
    ...handle,
    async close() {
      await handle.close();
      await database.drop();
    },
  };
}

/** A new, empty `test_<random>` database on the DATABASE_URL server, for processes a test starts. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!adminUrl) throw new Error('DATABASE_URL is not set');
  const name = `test_${randomBytes(8).toString('hex')}`;
  await withAdmin((sql) => sql.unsafe(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => withAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

async function withAdmin(run: (sql: postgres.Sql) => Promise<unknown>): Promise<void> {
  const sql = postgres(adminUrl as string, { max: 1, onnotice: () => {} });
  try {
    await run(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
