import { createServer, type Server, type Socket, connect } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../../src/errors/index.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { openTestDatabase, testDrivers, testServerAddress } from '../../helpers/database.js';

/** The client's deadline here: short, as every test below waits it out once. */
const DEADLINE_MS = 1_000;

/**
 * A TCP proxy to the test PostgreSQL server that can silence the connections it carries (they stay
 * open and take bytes, and nothing comes back: a connection that died without a FIN) or cut them.
 * Connections opened afterwards work again.
 */
interface Proxy {
  port: number;
  silence(): void;
  cut(): void;
  close(): Promise<void>;
}

async function startProxy(): Promise<Proxy> {
  const target = testServerAddress();
  const live = new Set<{ client: Socket; server: Socket }>();
  const silenced = new Set<{ client: Socket; server: Socket }>();
  const proxy: Server = createServer((client) => {
    const server = connect(target.port, target.host);
    const pair = { client, server };
    live.add(pair);
    client.pipe(server);
    server.pipe(client);
    const forget = () => {
      live.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', forget).on('close', forget);
    server.on('error', forget).on('close', forget);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  if (typeof address !== 'object' || address === null) throw new Error('proxy has no port');
  return {
    port: address.port,
    silence() {
      for (const { client, server } of live) {
        server.unpipe(client);
        client.unpipe(server);
        client.resume();
        server.resume();
        silenced.add({ client, server });
      }
      live.clear();
    },
    cut() {
      for (const { client } of live) client.destroy();
    },
    close() {
      for (const { client, server } of [...live, ...silenced]) {
        client.destroy();
        server.destroy();
      }
      return new Promise((resolve) => proxy.close(() => resolve()));
    },
  };
}

/** The UnavailableError a failed database call carries, itself or as the cause drizzle wrapped. */
async function unavailableFrom(call: Promise<unknown>): Promise<UnavailableError> {
  const error = await call.then(
    () => {
      throw new Error('the call succeeded');
    },
    (caught: unknown) => caught,
  );
  const unavailable = error instanceof UnavailableError ? error : (error as { cause?: unknown }).cause;
  expect(unavailable).toBeInstanceOf(UnavailableError);
  return unavailable as UnavailableError;
}

const countSpecs = async (handle: DatabaseHandle) => (await handle.db.select({ id: sandboxSpecs.id }).from(sandboxSpecs)).length;

describe.runIf(testDrivers.includes('postgres'))('the PostgreSQL client under connections that die', () => {
  let proxy: Proxy;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    proxy = await startProxy();
  });

  afterEach(async () => {
    await handle?.close();
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('fails a query on a connection that went silent with a retryable UnavailableError, and the next query runs on a fresh one', async () => {
    handle = await openTestDatabase('postgres', { viaPort: proxy.port, queryTimeoutMs: DEADLINE_MS });
    expect(await countSpecs(handle)).toBe(0);
    proxy.silence();

    const error = await unavailableFrom(countSpecs(handle));
    expect(error.retryAfterSeconds).toBe(1);
    expect(await countSpecs(handle)).toBe(0);
  });

  it('fails a transaction whose connection went silent midway, and the next transaction commits', async () => {
    handle = await openTestDatabase('postgres', { viaPort: proxy.port, queryTimeoutMs: DEADLINE_MS });
    const db = handle.db;
    const insertSpec = (id: string) =>
      db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        if (id === 'lost') proxy.silence();
        await tx.insert(sandboxSpecs).values({ id, image: 'img', workingDir: '/w', exposedPorts: [] });
      });

    await unavailableFrom(insertSpec('lost'));
    await insertSpec('kept');
    expect((await db.select({ id: sandboxSpecs.id }).from(sandboxSpecs)).map((row) => row.id)).toEqual(['kept']);
  });

  it('fails queries on connections that were cut as unavailable, and recovers', async () => {
    handle = await openTestDatabase('postgres', { viaPort: proxy.port, queryTimeoutMs: 60_000 });
    const db = handle.db;
    // drizzle queries run when awaited: Promise.resolve sends it now.
    const inFlight = Promise.resolve(db.execute(sql`select pg_sleep(30)`));
    // Cut once the query is on the wire, which the server shows as an active backend running it.
    const sleeping = async () => {
      const rows = (await db.execute(sql`select count(*)::int as n from pg_stat_activity where query = 'select pg_sleep(30)'`)) as unknown as { n: number }[];
      return rows[0]?.n;
    };
    await expect.poll(sleeping, { timeout: 20_000 }).toBe(1);
    proxy.cut();

    await unavailableFrom(inFlight);
    expect(await countSpecs(handle)).toBe(0);
  });

  it('fails a transaction whose connection was cut midway without an uncaught error, and the next transaction commits', async () => {
    handle = await openTestDatabase('postgres', { viaPort: proxy.port, queryTimeoutMs: 60_000 });
    const db = handle.db;
    const insertSpec = (id: string) =>
      db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        if (id !== 'cut') return tx.insert(sandboxSpecs).values({ id, image: 'img', workingDir: '/w', exposedPorts: [] });
        proxy.cut();
        // Let the client see its connection close before the transaction's next query.
        await new Promise((resolve) => setTimeout(resolve, 100));
        return tx.insert(sandboxSpecs).values({ id, image: 'img', workingDir: '/w', exposedPorts: [] });
      });

    await unavailableFrom(insertSpec('cut'));
    // A ROLLBACK written to the dead connection would throw from a timer now: vitest fails the run on it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await insertSpec('kept');
    expect((await db.select({ id: sandboxSpecs.id }).from(sandboxSpecs)).map((row) => row.id)).toEqual(['kept']);
  });

  it('rolls back a transaction that failed on a live connection, and keeps using that connection', async () => {
    handle = await openTestDatabase('postgres', { viaPort: proxy.port, queryTimeoutMs: DEADLINE_MS });
    const db = handle.db;
    const failed = await db
      .transaction(async (tx) => {
        await tx.insert(sandboxSpecs).values({ id: 'undone', image: 'img', workingDir: '/w', exposedPorts: [] });
        await tx.transaction(async (inner) => {
          await inner.insert(sandboxSpecs).values({ id: 'inner', image: 'img', workingDir: '/w', exposedPorts: [] });
        });
        throw new Error('changed my mind');
      })
      .catch((caught: unknown) => caught);
    expect((failed as Error).message).toBe('changed my mind');
    await db.transaction(async (tx) => {
      await tx.insert(sandboxSpecs).values({ id: 'kept', image: 'img', workingDir: '/w', exposedPorts: [] });
      await tx
        .transaction(async (inner) => {
          await inner.insert(sandboxSpecs).values({ id: 'inner undone', image: 'img', workingDir: '/w', exposedPorts: [] });
          throw new Error('not this part');
        })
        .catch(() => undefined);
    });
    expect((await db.select({ id: sandboxSpecs.id }).from(sandboxSpecs)).map((row) => row.id)).toEqual(['kept']);
  });

  it('passes the errors of queries the server refused through unchanged', async () => {
    handle = await openTestDatabase('postgres', { viaPort: proxy.port, queryTimeoutMs: DEADLINE_MS });
    const error = await handle.db.execute(sql`select 1/0`).catch((caught: unknown) => caught);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('22012');
    expect(await countSpecs(handle)).toBe(0);
  });
});
