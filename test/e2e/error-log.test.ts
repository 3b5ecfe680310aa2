import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { ensureBuilt } from '../helpers/build.js';
import { controlPlaneCaller, spawnControlPlane } from '../helpers/control-plane-process.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { freePort, stopProcess } from '../helpers/processes.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

const KEY = 'error-log-test-key-0123456789';
const docker = await connectDocker();

/** A sandbox turning ERROR is one warn line of the control plane's log, naming the sandbox and why. */
describe.runIf(docker)('the log of a sandbox in ERROR', { timeout: 180_000 }, () => {
  const instanceId = `error-log-${randomBytes(4).toString('hex')}`;
  const call = controlPlaneCaller(KEY);
  let dataDir: string;
  let port: number;
  let controlPlane: ChildProcess | undefined;
  let logs = '';

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = await makeTempDir('error-log-');
    port = await freePort();
    controlPlane = await spawnControlPlane(
      port,
      // Empty counts as unset: the suite's own DATABASE_URL must not reach this PGlite control plane.
      { DATA_DIR: dataDir, DATABASE_URL: '', SANDBOX_SERVER_API_KEYS: KEY, SANDBOX_SERVER_INSTANCE: instanceId, SANDBOX_WARM_POOL: '0', SANDBOX_RUNTIME: 'runc' },
      (text) => (logs += text),
    );
  }, 120_000);

  afterAll(async () => {
    await stopProcess(controlPlane, 'SIGTERM');
    if (docker) await removeInstanceResources(docker, instanceId).catch(() => undefined);
    if (dataDir) await removeDir(dataDir);
  }, 60_000);

  it('says which sandbox failed and why, as its status_detail does', async () => {
    const spec = await call({ port }, 'POST', '/api/v1/sandbox-specs', { id: `${instanceId}-exits`, image: TEST_BASE_IMAGE, command: ['sh', '-c', 'exit 3'] });
    expect(spec.status).toBe(201);
    const { body: started } = await call({ port }, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: `${instanceId}-exits` }, SandboxInfoSchema);
    const failed = await vi.waitFor(
      async () => {
        const { body } = await call({ port }, 'GET', `/api/v1/sandboxes?id=${started.id}`, undefined, z.array(SandboxInfoSchema.nullable()));
        expect(body[0]?.status).toBe('ERROR');
        return body[0]!;
      },
      { timeout: 60_000, interval: 250 },
    );
    expect(failed.status_detail).toBe('container exited with code 3');

    const lines = await vi.waitFor(() => {
      const found = logs
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; sandboxId?: string; statusDetail?: string; msg: string })
        .filter((line) => line.sandboxId === started.id);
      expect(found).not.toEqual([]);
      return found;
    });
    expect(lines.map(({ level, sandboxId, statusDetail, msg }) => ({ level, sandboxId, statusDetail, msg }))).toEqual([
      { level: 40, sandboxId: started.id, statusDetail: 'container exited with code 3', msg: `sandbox ${started.id} is ERROR: container exited with code 3` },
    ]);
  });
});
