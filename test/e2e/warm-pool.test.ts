import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema, SandboxPageSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecPageSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources, testInstanceId } from '../helpers/docker.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const WAIT = { timeout: 90_000, interval: 100 };

/**
 * The default spec's warm pool on the real engine, one member at a time (runc, to keep CI short):
 * a start is answered RUNNING and works through the proxy at once, the pool refills, an empty pool
 * starts cold, a restarted control plane adopts its member, and a changed spec replaces it.
 */
describe.runIf(docker)('warm pool on Docker, end to end', () => {
  const engine = docker as Docker;
  const instanceId = testInstanceId();
  let dataDir: string;
  let cp: E2eControlPlane | undefined;

  const start = (env: Record<string, string> = {}) =>
    startE2eControlPlane({ DATA_DIR: dataDir, SANDBOX_SERVER_INSTANCE: instanceId, SANDBOX_RUNTIME: 'runc', SANDBOX_WARM_POOL: '1', ...env });

  beforeAll(async () => {
    await buildE2eImage();
    dataDir = await makeTempDir('e2e-warm-pool-');
    cp = await start();
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    await removeInstanceResources(engine, instanceId);
    await removeDir(dataDir);
  });

  const plane = () => cp as E2eControlPlane;

  /** The pool's one ready member, as the engine and the spec show it. */
  async function readyMember(): Promise<{ sandboxId: string; containerId: string }> {
    return vi.waitFor(async () => {
      const spec = (await plane().request('GET', '/api/v1/sandbox-specs/search', undefined, SandboxSpecPageSchema)).body.items[0];
      expect(spec).toMatchObject({ warm_pool_size: 1, warm_pool_ready: 1 });
      const listed = (await plane().request('GET', '/api/v1/sandboxes/search', undefined, SandboxPageSchema)).body.items.map((s) => s.id);
      const containers = await engine.listContainers({ filters: { label: [`sandbox-server.instance=${instanceId}`] } });
      const members = containers.filter((c) => !listed.includes(c.Labels[LABEL_SANDBOX_ID] ?? ''));
      expect(members).toHaveLength(1);
      return { sandboxId: members[0]!.Labels[LABEL_SANDBOX_ID]!, containerId: members[0]!.Id };
    }, WAIT);
  }

  async function metric(name: string): Promise<number> {
    const text = await (await fetch(`${plane().url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  }

  it('answers a start RUNNING from the pool, runs a command through the proxy at once, refills, and starts cold when empty', async () => {
    const member = await readyMember();
    expect(await metric('warm_pool_ready')).toBe(1);

    const claimed = await plane().request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    // Asked at once, before the refill can be ready: the pool is empty, so this one is cold.
    const cold = await plane().request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);

    expect(claimed.body).toMatchObject({ id: member.sandboxId, status: 'RUNNING', session_api_key: expect.any(String) });
    expect(claimed.body.exposed_urls).toEqual([expect.objectContaining({ name: 'AGENT_SERVER' })]);
    const ran = await plane().request('POST', `/api/v1/sandboxes/${member.sandboxId}/agent/api/bash/execute_bash_command`, { command: 'echo ok', timeout: 30 });
    expect(ran.body).toMatchObject({ exit_code: 0, stdout: 'ok\n' });
    const direct = await fetch(`${claimed.body.exposed_urls?.[0]?.url}/api/conversations/count`, {
      headers: { 'X-Session-API-Key': claimed.body.session_api_key ?? '' },
    });
    expect(direct.status).toBe(200);
    expect(cold.body).toMatchObject({ status: 'STARTING', session_api_key: null });
    expect(await metric('warm_pool_hits_total')).toBe(1);
    expect(await metric('warm_pool_misses_total')).toBe(1);
    expect(await metric('warm_pool_claimed')).toBe(1);
    const events = (await plane().request('GET', `/api/v1/events/search?sandbox_id=${member.sandboxId}&type=sandbox.claimed`, undefined, LifecycleEventPageSchema)).body.items;
    expect(events).toHaveLength(1);

    const refilled = await readyMember();
    expect(refilled.sandboxId).not.toBe(member.sandboxId);
    for (const id of [member.sandboxId, cold.body.id]) expect((await plane().request('DELETE', `/api/v1/sandboxes/${id}`)).status).toBe(200);
  });

  it('adopts its member after a restart, and replaces it once the spec changed', async () => {
    const before = await readyMember();
    await plane().close();
    cp = undefined;
    cp = await start();
    const adopted = await readyMember();
    expect(adopted).toEqual(before);

    await plane().close();
    cp = undefined;
    // The limits are shared settings: a restart changes them only when told to.
    cp = await start({ SANDBOX_DEFAULT_MEMORY_MB: '1024', SHARED_SETTINGS_FROM_ENV: 'true' });
    const replaced = await vi.waitFor(async () => {
      const member = await readyMember();
      expect(member.sandboxId).not.toBe(before.sandboxId);
      return member;
    }, WAIT);
    await vi.waitFor(async () => {
      const left = await engine.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${before.sandboxId}`] } });
      expect(left).toEqual([]);
    }, WAIT);
    expect((await engine.getContainer(replaced.containerId).inspect()).HostConfig.Memory).toBe(1024 * 1024 * 1024);
    const claimed = await plane().request('POST', '/api/v1/sandboxes');
    expect(claimed.body).toMatchObject({ id: replaced.sandboxId, status: 'RUNNING' });
  });
});
