import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { SettingsSchema } from '../../src/sandbox-server/models/settings.js';
import { ensureBuilt } from '../helpers/build.js';
import { controlPlaneCaller, spawnControlPlane } from '../helpers/control-plane-process.js';
import { createTestDatabase } from '../helpers/database.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { freePort, stopProcess } from '../helpers/processes.js';

const KEY = 'shared-settings-admin-key-0123456789';
const docker = await connectDocker();

interface Replica {
  port: number;
  process: ChildProcess;
  logs: () => string;
}

/** pino's warn lines (level 40) of a replica, parsed. */
function warnings(logs: string): { msg: string; setting?: string; environment?: unknown; shared?: unknown }[] {
  return logs
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; setting?: string; environment?: unknown; shared?: unknown })
    .filter((line) => line.level === 40);
}

/**
 * Two control planes on one PostgreSQL database, each with its own environment: the first start
 * seeds the shared settings, the second keeps them and says which of its variables disagree, a
 * change through either replica's API holds for both, and SHARED_SETTINGS_FROM_ENV=true applies a
 * replica's environment on purpose.
 */
describe.runIf(docker && process.env.DATABASE_URL)('settings shared by replicas', { timeout: 300_000 }, () => {
  const instanceId = `settings-${randomBytes(4).toString('hex')}`;
  const call = controlPlaneCaller(KEY);
  let database: { url: string; drop(): Promise<void> };
  const replicas: Replica[] = [];

  async function replica(env: Record<string, string>, url = database.url): Promise<Replica> {
    const port = await freePort();
    let logs = '';
    const child = await spawnControlPlane(
      port,
      { ...env, DATABASE_URL: url, SANDBOX_SERVER_ADMIN_KEYS: KEY, SANDBOX_SERVER_INSTANCE: instanceId, SANDBOX_RUNTIME: 'runc' },
      (text) => (logs += text),
    );
    const started = { port, process: child, logs: () => logs };
    replicas.push(started);
    return started;
  }

  const settingsOf = async (target: Replica) => (await call(target, 'GET', '/api/v1/settings', undefined, SettingsSchema)).body;
  const defaultSpecOf = async (target: Replica) => {
    const { body } = await call(target, 'GET', `/api/v1/sandbox-specs?id=${encodeURIComponent(TEST_BASE_IMAGE)}`, undefined, z.array(SandboxSpecInfoSchema.nullable()));
    return body[0];
  };

  beforeAll(async () => {
    await ensureBuilt();
    database = await createTestDatabase();
  }, 300_000);

  let second: { url: string; drop(): Promise<void> } | undefined;

  afterAll(async () => {
    await Promise.all(replicas.map((r) => stopProcess(r.process, 'SIGTERM')));
    if (docker) await removeInstanceResources(docker, instanceId).catch(() => undefined);
    await database?.drop();
    await second?.drop();
  }, 120_000);

  it('seeds them once, keeps them against a disagreeing replica with a warning, and changes them for all only on request', async () => {
    const first = await replica({ SANDBOX_WARM_POOL: '0', SANDBOX_DEFAULT_MEMORY_MB: '1024', SANDBOX_DEFAULT_CPUS: '0.5' });
    const seeded = { warm_pool_size: 0, default_memory_mb: 1024, default_pids_limit: 512, default_cpus: 0.5, default_disk_mb: 10_240, default_runtime: 'runc' };
    expect(await settingsOf(first)).toMatchObject(seeded);
    expect(warnings(first.logs()).filter((line) => line.setting !== undefined)).toEqual([]);

    // The replica of the issue: started with a pool of 1 (and other limits), it must not change anything for the first.
    const second = await replica({ SANDBOX_WARM_POOL: '1', SANDBOX_DEFAULT_MEMORY_MB: '768', SANDBOX_DEFAULT_CPUS: '0.5' });
    expect(await settingsOf(second)).toMatchObject(seeded);
    expect(await defaultSpecOf(first)).toMatchObject({ warm_pool_size: 0, memory_mb: 1024, cpus: 0.5 });
    const disagreements = warnings(second.logs()).filter((line) => line.setting !== undefined);
    expect(disagreements.map(({ setting, environment, shared }) => ({ setting, environment, shared }))).toEqual([
      { setting: 'warm_pool_size', environment: 1, shared: 0 },
      { setting: 'default_memory_mb', environment: 768, shared: 1024 },
    ]);
    expect(disagreements[0]?.msg).toBe(
      "SANDBOX_WARM_POOL=1 in this replica's environment, but the installation's shared warm_pool_size is 0: keeping 0 for every replica on this database; " +
        'to change it run "sandboxctl settings set warm_pool_size=1" (PATCH /api/v1/settings) or start once with SHARED_SETTINGS_FROM_ENV=true',
    );

    // A change through one replica's API holds for the other's new specs and default spec at once.
    const changed = await call(second, 'PATCH', '/api/v1/settings', { default_memory_mb: 900, default_pids_limit: 300 }, SettingsSchema);
    expect(changed.status).toBe(200);
    expect(await settingsOf(first)).toMatchObject({ ...seeded, default_memory_mb: 900, default_pids_limit: 300 });
    expect(await defaultSpecOf(first)).toMatchObject({ memory_mb: 900, pids_limit: 300 });
    const created = await call(first, 'POST', '/api/v1/sandbox-specs', { id: `${instanceId}-plain`, image: TEST_BASE_IMAGE }, SandboxSpecInfoSchema);
    expect(created.body).toMatchObject({ memory_mb: 900, pids_limit: 300, cpus: 0.5, runtime: 'runc' });

    // Restarting the second replica with the explicit option makes its environment the shared settings.
    await stopProcess(second.process, 'SIGTERM');
    const applying = await replica({ SANDBOX_WARM_POOL: '0', SANDBOX_DEFAULT_MEMORY_MB: '768', SANDBOX_DEFAULT_CPUS: '0.25', SHARED_SETTINGS_FROM_ENV: 'true' });
    const applied = { ...seeded, default_memory_mb: 768, default_cpus: 0.25 };
    expect(await settingsOf(first)).toMatchObject(applied);
    expect(await defaultSpecOf(first)).toMatchObject({ warm_pool_size: 0, memory_mb: 768, cpus: 0.25, pids_limit: 512 });
    expect(warnings(applying.logs()).filter((line) => line.setting !== undefined)).toEqual([]);

    // And a replica restarted with its old environment keeps them, again saying so.
    await stopProcess(first.process, 'SIGTERM');
    const restarted = await replica({ SANDBOX_WARM_POOL: '0', SANDBOX_DEFAULT_MEMORY_MB: '1024', SANDBOX_DEFAULT_CPUS: '0.5' });
    expect(await settingsOf(restarted)).toMatchObject(applied);
    expect(warnings(restarted.logs()).map((line) => line.setting).filter(Boolean)).toEqual(['default_memory_mb', 'default_cpus']);
  });

  it('lets two replicas started at once on an empty database apply the migrations once and seed one environment whole', async () => {
    second = await createTestDatabase();
    const url = second.url;
    const [a, b] = await Promise.all([
      replica({ SANDBOX_WARM_POOL: '0', SANDBOX_DEFAULT_MEMORY_MB: '1000', SANDBOX_DEFAULT_CPUS: '0.5' }, url),
      replica({ SANDBOX_WARM_POOL: '0', SANDBOX_DEFAULT_MEMORY_MB: '2000', SANDBOX_DEFAULT_CPUS: '0.25' }, url),
    ]);
    const held = await settingsOf(a!);
    expect(await settingsOf(b!)).toEqual(held);
    // One start seeded, whole: never one variable of each.
    expect([[1000, 0.5], [2000, 0.25]]).toContainEqual([held.default_memory_mb, held.default_cpus]);
    const warned = [a!, b!].map((r) => warnings(r.logs()).map((line) => line.setting).filter(Boolean));
    expect(warned).toContainEqual([]);
    expect(warned).toContainEqual(['default_memory_mb', 'default_cpus']);
  });
});
