import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { engines } from '../../../src/sandbox-server/db/schema.js';
import { Drainer } from '../../../src/sandbox-server/engines/drainer.js';
import { logger } from '../../../src/logger.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { insertSandbox, insertSpec, readSandbox } from '../reconciler/fixtures.js';

/** Which running sandboxes a drain judges idle; the moves themselves are test/e2e/drain.test.ts's. */
describe.each(testDrivers)('Drainer (%s)', (driver) => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('leaves a sandbox idle by its traffic on a draining engine while its agent works, and moves one whose agent idles too', async () => {
    // A stand-in agent-server per session key: how long its agent did nothing, as /server_info says.
    const agentIdleSeconds = new Map<string, number>();
    const agentServer = createServer((request, response) => {
      const seconds = agentIdleSeconds.get(String(request.headers['x-session-api-key']));
      if (request.url !== '/server_info' || seconds === undefined) return response.writeHead(401).end();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ title: 'agent-server', version: '1', uptime: 3600, idle_time: seconds, docs: '/docs' }));
    });
    await new Promise<void>((resolve) => agentServer.listen(0, '127.0.0.1', resolve));
    const moves: string[] = [];
    try {
      await handle.db.update(engines).set({ state: 'DRAINING' }).where(eq(engines.name, 'local'));
      // Somewhere to move to: the move is refused before it reaches the engine anyway.
      await handle.db.insert(engines).values({ name: 'other', dockerUrl: 'unix:///var/run/docker-other.sock', advertiseHost: '127.0.0.9' });
      const spec = await insertSpec(handle.db);
      const idleByTraffic = {
        status: 'RUNNING',
        containerId: 'c',
        lastActiveAt: new Date(Date.now() - 3_600_000),
        hostAddress: '127.0.0.1',
        hostPorts: { AGENT_SERVER: (agentServer.address() as AddressInfo).port },
      } as const;
      const working = await insertSandbox(handle.db, spec.id, { ...idleByTraffic, createdAt: new Date(Date.now() - 2_000) });
      const idle = await insertSandbox(handle.db, spec.id, { ...idleByTraffic, createdAt: new Date(Date.now() - 1_000) });
      agentIdleSeconds.set(working.sessionApiKey, 2);
      agentIdleSeconds.set(idle.sessionApiKey, 7_200);
      const drainer = new Drainer({
        db: handle.db,
        log: logger.child({ test: 'drainer' }),
        instanceId: 'drainer-test',
        helperImage: 'unused',
        intervalMs: 60_000,
        idleMs: 60_000,
        ownEngines: () => ['local'],
        runtimeOf: () => {
          throw new Error('no engine in this test');
        },
        dockerOf: () => {
          throw new Error('no engine in this test');
        },
        // The move's first step: recorded, then refused, so that the round ends there.
        hold: (sandboxId) => {
          moves.push(sandboxId);
          return Promise.reject(new Error('not moved in this test'));
        },
        kick: () => {},
      });

      await drainer.kick();

      expect(moves).toEqual([idle.id]);
      const workingNow = await readSandbox(handle.db, working.id);
      expect(Date.now() - workingNow.lastActiveAt.getTime()).toBeLessThan(60_000);
    } finally {
      await handle.db.update(engines).set({ state: 'ACTIVE' }).where(eq(engines.name, 'local'));
      await handle.db.delete(engines).where(eq(engines.name, 'other'));
      await new Promise((resolve) => agentServer.close(resolve));
    }
  });
});
