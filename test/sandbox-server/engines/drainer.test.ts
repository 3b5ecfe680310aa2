import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { engines } from '../../../src/sandbox-server/db/schema.js';
import { Drainer } from '../../../src/sandbox-server/engines/drainer.js';
import { logger } from '../../../src/logger.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { insertSandbox, insertSpec, readSandbox, startIdleReportingAgentServer } from '../reconciler/fixtures.js';

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
    const agentServer = await startIdleReportingAgentServer();
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
        hostPorts: { AGENT_SERVER: agentServer.port },
      } as const;
      const working = await insertSandbox(handle.db, spec.id, { ...idleByTraffic, createdAt: new Date(Date.now() - 2_000) });
      const idle = await insertSandbox(handle.db, spec.id, { ...idleByTraffic, createdAt: new Date(Date.now() - 1_000) });
      agentServer.idleSeconds.set(working.sessionApiKey, 2);
      agentServer.idleSeconds.set(idle.sessionApiKey, 7_200);
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
      await agentServer.close();
    }
  });
});
