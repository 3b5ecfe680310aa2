import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SnapshotInfoSchema } from '../../src/sandbox-server/models/snapshot.js';
import { LABEL_INSTALLATION, LABEL_INSTANCE, LABEL_SANDBOX_ID, LABEL_SNAPSHOT_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { ensureBuilt } from '../helpers/build.js';
import { controlPlaneCaller, spawnControlPlane } from '../helpers/control-plane-process.js';
import { createTestDatabase } from '../helpers/database.js';
import { ALIVE_SERVER_COMMAND, connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { freePort, runBuiltControlPlane, stopProcess } from '../helpers/processes.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

const KEY = 'installations-test-key-0123456789';
const docker = await connectDocker();

/** What the engine holds of one instance label: each sandbox's container, every volume, every snapshot image. */
interface Inventory {
  containers: Record<string, string>;
  volumes: string[];
  snapshotImages: string[];
}

/**
 * Two installations (a PGlite data directory, then a PostgreSQL database, then the data directory
 * again) on one engine and one instance label: each leaves the other's sandboxes, volumes and
 * snapshots alone, reports them, and `sandbox-server resources` lists and removes them on request.
 */
describe.runIf(docker && process.env.DATABASE_URL)('installations sharing an engine', { timeout: 400_000 }, () => {
  const instanceId = `installations-${randomBytes(4).toString('hex')}`;
  const specId = `${instanceId}-alive`;
  const call = controlPlaneCaller(KEY);
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> };
  let port: number;
  let running: ChildProcess | undefined;
  let logs = '';

  // Empty counts as unset: the suite's own DATABASE_URL must not reach the PGlite control plane.
  const pglite = () => ({ DATA_DIR: dataDir, DATABASE_URL: '' });
  const postgres = () => ({ DATABASE_URL: database.url });

  async function serve(env: Record<string, string>): Promise<void> {
    logs = '';
    running = await spawnControlPlane(
      port,
      { ...env, SANDBOX_SERVER_API_KEYS: KEY, SANDBOX_SERVER_INSTANCE: instanceId, SANDBOX_WARM_POOL: '0', LOG_LEVEL: 'info' },
      (text) => (logs += text),
    );
  }

  async function stop(): Promise<void> {
    await stopProcess(running, 'SIGTERM');
    running = undefined;
  }

  async function inventory(): Promise<Inventory> {
    const filters = { label: [`${LABEL_INSTANCE}=${instanceId}`] };
    const containers = await docker!.listContainers({ all: true, filters: { label: [...filters.label, LABEL_SANDBOX_ID] } });
    const { Volumes } = await docker!.listVolumes({ filters });
    const images = await docker!.listImages({ filters: { label: [...filters.label, LABEL_SNAPSHOT_ID] } });
    return {
      containers: Object.fromEntries(containers.map((c) => [c.Labels[LABEL_SANDBOX_ID] ?? '', c.Id])),
      volumes: (Volumes ?? []).map((v) => v.Name).sort(),
      snapshotImages: images.map((i) => i.Id).sort(),
    };
  }

  async function installationOf(sandboxId: string): Promise<string> {
    const [container] = await docker!.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
    return container?.Labels[LABEL_INSTALLATION] ?? '';
  }

  async function createSpec(): Promise<void> {
    expect((await call({ port }, 'POST', '/api/v1/sandbox-specs', { id: specId, image: TEST_BASE_IMAGE, command: ALIVE_SERVER_COMMAND })).status).toBe(201);
  }

  async function createSandbox(): Promise<string> {
    const { status, body } = await call({ port }, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema);
    expect(status).toBe(200);
    return body.id;
  }

  async function untilRunning(ids: string[]): Promise<void> {
    await vi.waitFor(
      async () => {
        const { body } = await call({ port }, 'GET', `/api/v1/sandboxes?${ids.map((id) => `id=${id}`).join('&')}`, undefined, z.array(SandboxInfoSchema.nullable()));
        expect(body.map((info) => info?.status)).toEqual(ids.map(() => 'RUNNING'));
      },
      { timeout: 120_000, interval: 250 },
    );
  }

  /** Waits until the served control plane's gauge counts `count` foreign `kind`s of `installation`. */
  async function untilReported(installation: string, kind: string, count: number): Promise<void> {
    const line = new RegExp(`^sandbox_server_foreign_resources\\{engine="local",installation="${installation}",kind="${kind}"\\} ${count}$`, 'm');
    await vi.waitFor(async () => expect((await call({ port }, 'GET', '/metrics')).text).toMatch(line), { timeout: 30_000, interval: 250 });
  }

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = await makeTempDir('installations-');
    database = await createTestDatabase();
    port = await freePort();
  }, 300_000);

  afterAll(async () => {
    await stop();
    if (docker) await removeInstanceResources(docker, instanceId).catch(() => undefined);
    await database?.drop();
    if (dataDir) await removeDir(dataDir);
  }, 120_000);

  it('keeps six PGlite sandboxes and their snapshots through a PostgreSQL control plane and back, and reports each side\'s to the other', async () => {
    await serve(pglite());
    await createSpec();
    const sandboxIds: string[] = [];
    for (let i = 0; i < 6; i++) sandboxIds.push(await createSandbox());
    await untilRunning(sandboxIds);
    for (const id of sandboxIds.slice(0, 2)) {
      expect((await call({ port }, 'POST', `/api/v1/sandboxes/${id}/snapshots`, {}, SnapshotInfoSchema)).status).toBe(201);
    }
    const pgliteInstallation = await installationOf(sandboxIds[0] as string);
    expect(pgliteInstallation).toMatch(/^[0-9a-f-]{36}$/);
    await stop();
    const before = await inventory();
    expect(Object.keys(before.containers).sort()).toEqual([...sandboxIds].sort());
    expect(before.snapshotImages).toHaveLength(2);

    // Another database on the same engine: nothing of the first is its own.
    await serve(postgres());
    await untilReported(pgliteInstallation, 'container', 6);
    await untilReported(pgliteInstallation, 'snapshot', 2);
    // Well past the orphan grace (2 s) at one sweep a second.
    await sleep(5_000);
    expect(await inventory()).toEqual(before);
    const warnings = logs.split('\n').filter((line) => line.includes('"level":40') && line.includes(pgliteInstallation));
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.join('\n')).toContain('sandbox-server resources');
    const listed = await runBuiltControlPlane(['resources', 'ls'], { ...postgres(), SANDBOX_SERVER_INSTANCE: instanceId });
    expect(listed.code).toBe(0);
    for (const containerId of Object.values(before.containers)) expect(listed.stdout).toContain(containerId);
    expect(listed.stdout).toContain(pgliteInstallation);
    await createSpec();
    const postgresSandbox = await createSandbox();
    await untilRunning([postgresSandbox]);
    const postgresInstallation = await installationOf(postgresSandbox);
    expect(postgresInstallation).not.toBe(pgliteInstallation);
    await stop();

    // Back on the data directory: every sandbox is there with its own container, and the other's is reported.
    await serve(pglite());
    await untilRunning(sandboxIds);
    await untilReported(postgresInstallation, 'container', 1);
    await sleep(5_000);
    const after = await inventory();
    for (const id of sandboxIds) expect(after.containers[id]).toBe(before.containers[id]);
    expect(after.snapshotImages).toEqual(before.snapshotImages);
    for (const volume of before.volumes) expect(after.volumes).toContain(volume);
    expect(after.containers[postgresSandbox]).toBeDefined();
    await stop();

    // Removing the other installation's resources is explicit: without --yes nothing goes.
    const dryRun = await runBuiltControlPlane(['resources', 'rm', postgresInstallation], { ...pglite(), SANDBOX_SERVER_INSTANCE: instanceId });
    expect(dryRun.code).toBe(1);
    expect(dryRun.stdout).toContain(`would remove container ${after.containers[postgresSandbox]}`);
    expect((await inventory()).containers[postgresSandbox]).toBeDefined();
    const removed = await runBuiltControlPlane(['resources', 'rm', postgresInstallation, '--yes'], { ...pglite(), SANDBOX_SERVER_INSTANCE: instanceId });
    expect(removed.code).toBe(0);
    const last = await inventory();
    expect(last.containers[postgresSandbox]).toBeUndefined();
    expect(Object.keys(last.containers).sort()).toEqual([...sandboxIds].sort());
    const own = await runBuiltControlPlane(['resources', 'rm', pgliteInstallation, '--yes'], { ...pglite(), SANDBOX_SERVER_INSTANCE: instanceId });
    expect(own.code).toBe(2);
    expect(own.stderr).toContain('is this installation');
  });
});
