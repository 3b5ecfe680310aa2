import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { type SandboxInfo, SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { dataVolumeNameFor } from '../../src/sandbox-server/runtime/resource-names.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID, LABEL_SPEC_ID, LABEL_VOLUME_COPY } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const EventPageSchema = pageSchema(EventSchema);

const run = promisify(execFile);
const SHARED = process.env.SHARED_DIR ?? join(import.meta.dirname, '..', '..', '..', 'shared');
const main = await connectDocker();
const message = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });

/**
 * Drain on real engines: the machine's engine (`local`) and e1 (the fleet tests' engine, started
 * idempotently by the shared script; this suite only cordons and drains, never stops an engine,
 * and touches only resources carrying its own instance label). On e1: a paused sandbox and a
 * running one, each with a file in /workspace and a conversation, and a warm-pool member. The
 * drain moves the paused one at once and keeps it paused; the running one stays while requests
 * keep it busy, then, idle, is paused, moved and started again; the member is retired, not
 * counted, and its pool refilled on local. Both keep their ids, keys, files and event ids.
 */
describe.runIf(main)('drain of an engine, end to end', { timeout: 600_000 }, () => {
  const e1 = new Docker({ socketPath: '/var/run/docker-e1.sock' });
  let cp: E2eControlPlane;

  const agent = (sandboxId: string, path: string) => `/api/v1/sandboxes/${sandboxId}/agent${path}`;
  const bash = async (sandboxId: string, command: string) =>
    (await cp.request('POST', agent(sandboxId, '/api/bash/execute_bash_command'), { command, timeout: 30 }, BashOutputSchema)).body;
  const sandboxById = async (id: string) => (await cp.request('GET', `/api/v1/sandboxes?id=${id}`, undefined, z.array(SandboxInfoSchema))).body[0];
  const engine = async (name: string) => (await cp.request('GET', `/api/v1/engines?name=${name}`, undefined, EnginePageSchema)).body.items[0];
  const lifecycle = async (sandboxId: string) =>
    (await cp.request('GET', `/api/v1/events/search?sandbox_id=${sandboxId}&limit=100&sort_order=TIMESTAMP`, undefined, LifecycleEventPageSchema)).body.items;

  beforeAll(async () => {
    await run('bash', [join(SHARED, 'env', 'extra-engines.sh'), '1'], { timeout: 180_000 });
    await buildE2eImage();
    cp = await startE2eControlPlane({
      DOCKER_ENGINES: 'local=unix:///var/run/docker.sock@127.0.0.1,e1=unix:///var/run/docker-e1.sock@127.0.0.2',
      SANDBOX_RUNTIME: 'runc',
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: 'http://127.0.0.1:18081/v1',
      // Far above the gaps between the busy sandbox's requests, even on a loaded machine.
      DRAIN_IDLE_SECONDS: '15',
    });
  }, 300_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) for (const docker of [main as Docker, e1]) await removeInstanceResources(docker, cp.instanceId);
  });

  /** A file and a conversation in the sandbox; answers the conversation's events path and its event ids. */
  async function leaveTraces(sandboxId: string, text: string): Promise<{ eventsPath: string; eventIds: string[] }> {
    expect((await bash(sandboxId, `echo ${text} > /workspace/notes.txt`)).exit_code).toBe(0);
    const conversation = await cp.request('POST', '/api/v1/app-conversations?wait=true', { sandbox_id: sandboxId, initial_message: message('remember me') }, AppConversationSchema);
    expect(conversation.status).toBe(200);
    const eventsPath = agent(sandboxId, `/api/conversations/${conversation.body.id}/events/search?limit=100`);
    const eventIds = (await cp.request('GET', eventsPath, undefined, EventPageSchema)).body.items.map((event) => event.id);
    expect(eventIds.length).toBeGreaterThan(0);
    return { eventsPath, eventIds };
  }

  it('refuses to register a dockerd already registered, naming the engine it is', async () => {
    expect(await cp.request('POST', '/api/v1/engines', { name: 'e1-twin', docker_url: 'unix:///var/run/docker-e1.sock', advertise_host: '127.0.0.2' })).toEqual({
      status: 409,
      body: { detail: expect.stringMatching(/^Engine e1-twin is the Docker engine already registered as e1 \(ID [^,]+, data root \/var\/lib\/docker-e1 on [^)]+\); two engines on one dockerd would remove each other's containers as orphans$/) },
    });
  });

  it('moves paused and idle sandboxes with their files, conversations and history, keeps their states, retires warm-pool members, and leaves nothing on the old engine', async () => {
    // Placed on e1: local is cordoned until the drain, so the pool's member (or its replacement,
    // should a top-up retire it meanwhile) is there too.
    expect((await cp.request('POST', '/api/v1/engines/local/cordon')).status).toBe(200);
    const paused = await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    const running = await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    expect([paused.body.engine, running.body.engine]).toEqual(['e1', 'e1']);
    const pooled = `pooled-${cp.instanceId}`;
    expect((await cp.request('POST', '/api/v1/sandbox-specs', { id: pooled, image: E2E_IMAGE, warm_pool_size: 1 })).status).toBe(201);
    // The first starts on e1 wait for the agent-server image to be copied there.
    const [p, r] = await vi.waitFor(
      async () => {
        const rows = [await sandboxById(paused.body.id), await sandboxById(running.body.id)];
        expect(rows.map((row) => row?.status)).toEqual(['RUNNING', 'RUNNING']);
        return rows as [SandboxInfo, SandboxInfo];
      },
      { timeout: 240_000, interval: 250 },
    );
    const pTraces = await leaveTraces(p.id, 'paused-on-e1');
    const rTraces = await leaveTraces(r.id, 'running-on-e1');
    expect((await cp.request('POST', `/api/v1/sandboxes/${p.id}/pause`)).status).toBe(200);
    await cp.sandboxUntil(p.id, 'PAUSED');

    // The running sandbox is kept busy by requests through the proxy until it is let be idle.
    let busy = true;
    const answers: (number | string)[] = [];
    const requests = (async () => {
      while (busy) {
        answers.push(await cp.request('GET', agent(r.id, '/alive')).then((answer) => answer.status, (error: unknown) => String(error)));
        await sleep(250);
      }
    })();
    // The warm-pool member is on e1 too, but is not the drain's to wait for (retired at once, it may be gone by the answer).
    await vi.waitFor(
      async () => {
        expect((await engine('e1'))?.sandboxes).toBe(3);
        expect((await cp.request('GET', `/api/v1/sandbox-specs?id=${pooled}`, undefined, z.array(SandboxSpecInfoSchema))).body[0]?.warm_pool_ready).toBe(1);
      },
      { timeout: 120_000, interval: 250 },
    );
    expect((await cp.request('POST', '/api/v1/engines/local/uncordon')).status).toBe(200);
    const draining = await cp.request('POST', '/api/v1/engines/e1/drain', undefined, EngineInfoSchema);
    expect(draining.body).toMatchObject({ state: 'DRAINING', drain: { moved: 0, remaining: 2, staying: 0 } });
    const movedPaused = await vi.waitFor(
      async () => {
        const row = await sandboxById(p.id);
        expect(row).toMatchObject({ engine: 'local', status: 'PAUSED' });
        return row!;
      },
      { timeout: 180_000, interval: 500 },
    );
    expect(movedPaused.session_api_key).toBeNull();
    // Busy, the running one stays, and still counts; the member is gone from e1 meanwhile.
    await vi.waitFor(async () => expect(await engine('e1')).toMatchObject({ sandboxes: 1, drain: { moved: 1, remaining: 1, staying: 0 } }), { timeout: 60_000, interval: 250 });
    expect(await sandboxById(r.id)).toMatchObject({ engine: 'e1', status: 'RUNNING' });
    busy = false;
    await requests;
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((status) => status !== 200)).toEqual([]);

    // Idle now: paused, moved and started again on local, with its key, files and conversation.
    const movedRunning = await vi.waitFor(
      async () => {
        const row = await sandboxById(r.id);
        expect(row).toMatchObject({ engine: 'local', status: 'RUNNING' });
        return row!;
      },
      { timeout: 240_000, interval: 500 },
    );
    expect(movedRunning.session_api_key).toBe(r.session_api_key);
    expect(await bash(r.id, 'cat /workspace/notes.txt')).toMatchObject({ exit_code: 0, stdout: 'running-on-e1\n' });
    expect((await cp.request('GET', rTraces.eventsPath, undefined, EventPageSchema)).body.items.map((event) => event.id)).toEqual(rTraces.eventIds);
    expect(await engine('e1')).toMatchObject({ sandboxes: 0, drain: { moved: 2, remaining: 0, staying: 0 } });

    // Each history is still its own, with the move in it; the running one's says it was paused for it and ran again.
    const pEvents = await lifecycle(p.id);
    const pTypes = pEvents.map((event) => event.type);
    expect(pTypes.filter((type) => type === 'sandbox.moved')).toHaveLength(1);
    expect(pTypes.slice(0, pTypes.indexOf('sandbox.moved'))).toEqual(expect.arrayContaining(['sandbox.running', 'sandbox.paused']));
    expect(pEvents.find((event) => event.type === 'sandbox.moved')?.status_detail).toBe('moved from engine e1 to local by a drain');
    const rEvents = await lifecycle(r.id);
    const rTypes = rEvents.map((event) => event.type);
    const rMoved = rTypes.indexOf('sandbox.moved');
    expect(rTypes.filter((type) => type === 'sandbox.moved')).toHaveLength(1);
    expect(rEvents[rMoved - 1]).toMatchObject({ type: 'sandbox.paused', previous_status: 'RUNNING', status: 'PAUSED', status_detail: 'paused to be moved from engine e1 to local by a drain' });
    expect(rTypes.slice(rMoved + 1)).toContain('sandbox.running');

    // The pool is refilled on local, with a container there.
    await vi.waitFor(
      async () => {
        const [spec] = (await cp.request('GET', `/api/v1/sandbox-specs?id=${pooled}`, undefined, z.array(SandboxSpecInfoSchema))).body;
        expect(spec?.warm_pool_ready).toBe(1);
        expect(await (main as Docker).listContainers({ filters: { label: [`${LABEL_INSTANCE}=${cp.instanceId}`, `${LABEL_SPEC_ID}=${pooled}`] } })).toHaveLength(1);
      },
      { timeout: 120_000, interval: 500 },
    );

    // Nothing of them is left on e1 once the moves have cleaned up after their commits: no
    // container (the retired member's neither), data volume, network or volume-copy helper.
    const ours = { label: [`${LABEL_INSTANCE}=${cp.instanceId}`] };
    await vi.waitFor(
      async () => {
        expect(await e1.listContainers({ all: true, filters: ours })).toEqual([]);
        for (const id of [p.id, r.id]) {
          expect(await e1.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${cp.instanceId}`, `${LABEL_SANDBOX_ID}=${id}`] } })).toEqual([]);
          await expect(e1.getVolume(dataVolumeNameFor(id)).inspect()).rejects.toMatchObject({ statusCode: 404 });
        }
        for (const docker of [main as Docker, e1]) {
          expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${cp.instanceId}`, LABEL_VOLUME_COPY] } })).toEqual([]);
        }
      },
      { timeout: 60_000, interval: 500 },
    );

    // The paused one resumed on local: same id, same files, same conversation events.
    expect((await cp.request('POST', `/api/v1/sandboxes/${p.id}/resume`)).status).toBe(200);
    const resumed = await cp.sandboxUntil(p.id, 'RUNNING');
    expect(resumed.engine).toBe('local');
    expect(resumed.session_api_key).toBe(p.session_api_key);
    expect(await bash(p.id, 'cat /workspace/notes.txt')).toMatchObject({ exit_code: 0, stdout: 'paused-on-e1\n' });
    expect((await cp.request('GET', pTraces.eventsPath, undefined, EventPageSchema)).body.items.map((event) => event.id)).toEqual(pTraces.eventIds);
    for (const id of [p.id, r.id]) expect((await cp.request('DELETE', `/api/v1/sandboxes/${id}`)).status).toBe(200);
    expect((await cp.request('DELETE', `/api/v1/sandbox-specs/${pooled}`)).status).toBe(200);
  });
});
