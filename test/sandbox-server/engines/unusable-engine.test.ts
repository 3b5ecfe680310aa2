import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../../src/sandbox-server/config.js';
import { openDatabase } from '../../../src/sandbox-server/db/client.js';
import { engines } from '../../../src/sandbox-server/db/schema.js';
import { EngineInfoSchema, EnginePageSchema } from '../../../src/sandbox-server/models/engine.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { ENGINES_CHANNEL } from '../../../src/sandbox-server/replicas/hand-off.js';
import { startSandboxServer, type RunningSandboxServer } from '../../../src/sandbox-server/server.js';
import { readAnswer } from '../../helpers/answer.js';
import { createTestDatabase } from '../../helpers/database.js';
import { createFakeRuntime } from '../../helpers/fake-runtime.js';

const KEY = 'unusable-engine-admin-key-0123456789';
const DETAIL = 'the address tcp://127.0.0.1:99999 cannot be used: docker_url port 99999 is not between 1 and 65535';

/**
 * An engine whose port no connection can use, as the API accepted before addresses were checked:
 * its sandboxes stayed STARTING forever, it could not be removed, and a restart failed outright.
 */
describe.skipIf(!process.env.DATABASE_URL)('an engine whose address cannot be used', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const start = (ensureImage: () => Promise<unknown> = async () => 'present') =>
    startSandboxServer(
      loadConfig({ PORT: '0', DATABASE_URL: database.url, SANDBOX_SERVER_ADMIN_KEYS: KEY, SANDBOX_SERVER_INSTANCE: 'unusable-engine', SANDBOX_WARM_POOL: '0', RECONCILE_INTERVAL_MS: '200', LOG_LEVEL: 'silent' }),
      { runtime: createFakeRuntime(), ensureImage, checkAlive: async () => true },
    );
  const call = async <S extends z.ZodType = z.ZodUnknown>(server: RunningSandboxServer, method: string, path: string, schema?: S) =>
    readAnswer(await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}` } }), schema);

  it('turns its sandboxes ERROR saying why, finishes their deletion, can be removed, and stops no start', async () => {
    const first = await start();
    try {
      expect((await call(first, 'POST', '/api/v1/engines/local/cordon', EngineInfoSchema)).body.state).toBe('CORDONED');
      const handle = await openDatabase({ url: database.url, queryTimeoutMs: 10_000 });
      try {
        await handle.db.insert(engines).values({ name: 'bad', dockerUrl: 'tcp://127.0.0.1:99999', advertiseHost: '127.0.0.1' });
        await handle.db.execute(`select pg_notify('${ENGINES_CHANNEL}', '')`);
      } finally {
        await handle.close();
      }
      const badEngine = async () => (await call(first, 'GET', '/api/v1/engines?name=bad', EnginePageSchema)).body.items[0];
      await expect.poll(async () => (await badEngine())?.health).toBe('UNREACHABLE');
      expect((await badEngine())?.health_detail).toBe(DETAIL);

      const created = await call(first, 'POST', '/api/v1/sandboxes', SandboxInfoSchema);
      expect(created.body.engine).toBe('bad');
      const sandbox = async () => (await call(first, 'GET', `/api/v1/sandboxes?id=${created.body.id}`, z.array(SandboxInfoSchema.nullable()))).body[0];
      await expect.poll(async () => (await sandbox())?.status).toBe('ERROR');
      expect((await sandbox())?.status_detail).toContain(DETAIL);
      expect((await call(first, 'DELETE', '/api/v1/engines/bad')).status).toBe(409);
      expect((await call(first, 'DELETE', `/api/v1/sandboxes/${created.body.id}`)).status).toBe(200);
      await expect.poll(async () => (await call(first, 'DELETE', '/api/v1/engines/bad')).status).toBe(200);
    } finally {
      await first.close();
    }
  });

  it('does not keep the server from starting', async () => {
    const handle = await openDatabase({ url: database.url, queryTimeoutMs: 10_000 });
    try {
      await handle.db.insert(engines).values({ name: 'bad-again', dockerUrl: 'tcp://127.0.0.1:99999', advertiseHost: '169.254.169.254' });
    } finally {
      await handle.close();
    }
    const server = await start();
    try {
      await expect.poll(async () => (await call(server, 'GET', '/api/v1/engines?name=bad-again', EnginePageSchema)).body.items[0]?.health).toBe('UNREACHABLE');
      expect((await call(server, 'GET', '/api/v1/engines?name=local', EnginePageSchema)).body.items[0]?.health).not.toBe('UNREACHABLE');
    } finally {
      await server.close();
    }
  });

  // An engine that accepts connections and never answers held its image step, and so shutdown, up
  // for as long as the connection lasted (SIGTERM was ignored for over 100 s).
  it('shuts down while an engine never answers', async () => {
    const server = await start(() => new Promise(() => {}));
    expect((await call(server, 'GET', '/api/v1/engines', EnginePageSchema)).status).toBe(200);
    await server.close();
  });
});
