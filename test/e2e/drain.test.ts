import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema } from '../../src/events/index.js';
import { AppConversationSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { EngineInfoSchema, EnginePageSchema } from '../../src/sandbox-server/models/engine.js';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { dataVolumeNameFor } from '../../src/sandbox-server/reconciler/index.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID, LABEL_VOLUME_COPY } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const EventPageSchema = pageSchema(EventSchema);

const run = promisify(execFile);
const SHARED = process.env.SHARED_DIR ?? join(import.meta.dirname, '..', '..', '..', 'shared');
const main = await connectDocker();
const message = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });

/**
 * Drain on real engines: the machine's engine (`local`) and e1 (the fleet tests' engine, started
 * idempotently by the shared script; this suite only cordons and drains, never stops an engine,
 * and touches only resources carrying its own instance label). A paused sandbox with a file in
 * /workspace and a conversation moves from e1 to local with them, keeping its id and history.
 */
describe.runIf(main)('drain of an engine, end to end', { timeout: 300_000 }, () => {
  const e1 = new Docker({ socketPath: '/var/run/docker-e1.sock' });
  let cp: E2eControlPlane;

  const agent = (sandboxId: string, path: string) => `/api/v1/sandboxes/${sandboxId}/agent${path}`;
  const bash = async (sandboxId: string, command: string) =>
    (await cp.request('POST', agent(sandboxId, '/api/bash/execute_bash_command'), { command, timeout: 30 }, BashOutputSchema)).body;

  beforeAll(async () => {
    await run('bash', [join(SHARED, 'env', 'extra-engines.sh'), '1'], { timeout: 180_000 });
    await buildE2eImage();
    cp = await startE2eControlPlane({
      DOCKER_ENGINES: 'local=unix:///var/run/docker.sock@127.0.0.1,e1=unix:///var/run/docker-e1.sock@127.0.0.2',
      SANDBOX_RUNTIME: 'runc',
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: 'http://127.0.0.1:18081/v1',
    });
  }, 300_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) for (const docker of [main as Docker, e1]) await removeInstanceResources(docker, cp.instanceId);
  });

  it('moves a paused sandbox with its files, conversation and history, keeps it paused, and leaves nothing on the old engine', async () => {
    // Placed on e1: local is cordoned while it starts.
    expect((await cp.request('POST', '/api/v1/engines/local/cordon')).status).toBe(200);
    const started = await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    expect(started.body.engine).toBe('e1');
    expect((await cp.request('POST', '/api/v1/engines/local/uncordon')).status).toBe(200);
    // The first start on e1 waits for the agent-server image to be copied there.
    const sandbox = await vi.waitFor(
      async () => {
        const [row] = (await cp.request('GET', `/api/v1/sandboxes?id=${started.body.id}`, undefined, z.array(SandboxInfoSchema))).body;
        expect(row?.status).toBe('RUNNING');
        return row!;
      },
      { timeout: 240_000, interval: 250 },
    );
    expect((await bash(sandbox.id, 'echo written on e1 > /workspace/notes.txt')).exit_code).toBe(0);
    const conversation = await cp.request('POST', '/api/v1/app-conversations?wait=true', { sandbox_id: sandbox.id, initial_message: message('remember me') }, AppConversationSchema);
    expect(conversation.status).toBe(200);
    const eventsPath = agent(sandbox.id, `/api/conversations/${conversation.body.id}/events/search?limit=100`);
    const eventIds = (await cp.request('GET', eventsPath, undefined, EventPageSchema)).body.items.map((event) => event.id);
    expect(eventIds.length).toBeGreaterThan(0);
    expect((await cp.request('POST', `/api/v1/sandboxes/${sandbox.id}/pause`)).status).toBe(200);
    await cp.sandboxUntil(sandbox.id, 'PAUSED');

    const draining = await cp.request('POST', '/api/v1/engines/e1/drain', undefined, EngineInfoSchema);
    expect(draining.body).toMatchObject({ state: 'DRAINING', drain: { moved: 0, remaining: 1, staying: 0 } });
    const moved = await vi.waitFor(
      async () => {
        const [row] = (await cp.request('GET', `/api/v1/sandboxes?id=${sandbox.id}`, undefined, z.array(SandboxInfoSchema))).body;
        expect(row).toMatchObject({ engine: 'local', status: 'PAUSED' });
        return row!;
      },
      { timeout: 180_000, interval: 500 },
    );
    expect(moved.session_api_key).toBeNull();
    expect((await cp.request('GET', '/api/v1/engines?name=e1', undefined, EnginePageSchema)).body.items[0]).toMatchObject({ sandboxes: 0, drain: { moved: 1, remaining: 0, staying: 0 } });
    const events = (await cp.request('GET', `/api/v1/events/search?sandbox_id=${sandbox.id}&limit=100&sort_order=TIMESTAMP`, undefined, LifecycleEventPageSchema)).body.items;
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'sandbox.moved')).toHaveLength(1);
    // Its history from before the move is still its own.
    expect(types.slice(0, types.indexOf('sandbox.moved'))).toEqual(expect.arrayContaining(['sandbox.running', 'sandbox.paused']));
    expect(events.find((event) => event.type === 'sandbox.moved')?.status_detail).toBe('moved from engine e1 to local by a drain');

    // Nothing of it is left on e1 once the move has cleaned up after its commit: no container, data
    // volume, network or volume-copy helper.
    const mine = { label: [`${LABEL_INSTANCE}=${cp.instanceId}`, `${LABEL_SANDBOX_ID}=${sandbox.id}`] };
    await vi.waitFor(
      async () => {
        expect(await e1.listContainers({ all: true, filters: mine })).toEqual([]);
        expect(await e1.listNetworks({ filters: mine })).toEqual([]);
        await expect(e1.getVolume(dataVolumeNameFor(sandbox.id)).inspect()).rejects.toMatchObject({ statusCode: 404 });
        for (const docker of [main as Docker, e1]) {
          expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${cp.instanceId}`, LABEL_VOLUME_COPY] } })).toEqual([]);
        }
      },
      { timeout: 60_000, interval: 500 },
    );

    // Resumed on local: same id, same files, same conversation events.
    expect((await cp.request('POST', `/api/v1/sandboxes/${sandbox.id}/resume`)).status).toBe(200);
    const resumed = await cp.sandboxUntil(sandbox.id, 'RUNNING');
    expect(resumed.engine).toBe('local');
    expect(resumed.session_api_key).toBe(sandbox.session_api_key);
    expect(await bash(sandbox.id, 'cat /workspace/notes.txt')).toMatchObject({ exit_code: 0, stdout: 'written on e1\n' });
    expect((await cp.request('GET', eventsPath, undefined, EventPageSchema)).body.items.map((event) => event.id)).toEqual(eventIds);
    expect((await cp.request('DELETE', `/api/v1/sandboxes/${sandbox.id}`)).status).toBe(200);
  });
});
