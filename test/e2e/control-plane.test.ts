import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema, ObservationEventSchema } from '../../src/events/index.js';
import { AppConversationSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecPageSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { LABEL_AGENT_SERVER_VERSION, LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { type ScriptedLlm, type ScriptStep, startScriptedLlm, toolCalls } from '../helpers/scripted-llm.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';
import { startRunningSandbox } from './sandbox-agent.js';

const docker = await connectDocker();
const message = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });
const EventPageSchema = pageSchema(EventSchema);

/**
 * The whole system on the real engine: control plane, real agent-server image, HTTP and WebSocket.
 * Everything runs under gVisor (runsc), the default where the engine has it; the lifecycle also runs
 * under runc, which the rest does not depend on, to keep CI short.
 */
describe.runIf(docker).each(['runsc', 'runc'] as const)('control plane on Docker under %s, end to end', (runtime) => {
  // Registered only under runsc rather than skipped under runc: CI counts no skips.
  const gvisorOnly = (name: string, test: () => Promise<void>) => {
    if (runtime === 'runsc') it(name, test);
  };
  let cp: E2eControlPlane;
  let llm: ScriptedLlm;
  const engine = docker as Docker;
  const script: ScriptStep[] = [];

  beforeAll(async () => {
    await buildE2eImage();
    // The LLM the agents call is a scripted one on this host's loopback, reached through the
    // control plane's LLM relay; each test queues the answers its conversation gets.
    llm = await startScriptedLlm([], { responder: () => script.shift() ?? { status: 500, body: { error: { message: 'script exhausted' } } } });
    cp = await startE2eControlPlane({
      SANDBOX_RUNTIME: runtime,
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: llm.baseUrl,
    });
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    await llm?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  async function containersOf(sandboxId: string) {
    return engine.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
  }

  it('starts, pauses, resumes and deletes a sandbox whose agent-server answers with its own key', async () => {
    const started = await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ status: 'STARTING', session_api_key: null, exposed_urls: null });
    const running = await cp.sandboxUntil(started.body.id, 'RUNNING');
    // The version the image was built with, as the sandbox's own container shows it.
    const image = await engine.getImage(E2E_IMAGE).inspect();
    expect(running.agent_server_version).toMatch(/^\d+\.\d+\.\d+\+[0-9a-f]{12}$/);
    expect(running.agent_server_version).toBe(image.Config.Labels?.[LABEL_AGENT_SERVER_VERSION]);
    const agentUrl = running.exposed_urls?.find((u) => u.name === 'AGENT_SERVER')?.url;
    const [container] = await containersOf(running.id);
    expect((await engine.getContainer(container!.Id).inspect()).HostConfig.Runtime).toBe(runtime);
    expect((await cp.request('GET', '/api/v1/sandbox-specs/search', undefined, SandboxSpecPageSchema)).body.items[0]?.runtime).toBe(runtime);
    expect(agentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const withKey = await fetch(`${agentUrl}/api/conversations/count`, { headers: { 'X-Session-API-Key': running.session_api_key ?? '' } });
    expect(withKey.status).toBe(200);
    expect(await withKey.json()).toBe(0);
    expect((await fetch(`${agentUrl}/api/conversations/count`)).status).toBe(401);

    expect(await cp.request('POST', `/api/v1/sandboxes/${running.id}/pause`, {})).toEqual({ status: 200, body: { success: true } });
    await cp.sandboxUntil(running.id, 'PAUSED');
    const [paused] = await containersOf(running.id);
    expect((await engine.getContainer(paused!.Id).inspect()).State.Paused).toBe(true);

    expect((await cp.request('POST', `/api/v1/sandboxes/${running.id}/resume`, {})).status).toBe(200);
    const resumed = await cp.sandboxUntil(running.id, 'RUNNING');
    expect((await engine.getContainer(paused!.Id).inspect()).State.Paused).toBe(false);

    expect(await cp.request('DELETE', `/api/v1/sandboxes/${resumed.id}`)).toEqual({ status: 200, body: { success: true } });
    await vi.waitFor(async () => expect(await containersOf(resumed.id)).toEqual([]), { timeout: 30_000, interval: 100 });
    expect((await cp.request('GET', `/api/v1/sandboxes?id=${resumed.id}`)).body).toEqual([null]);
    expect((await cp.request('POST', `/api/v1/sandboxes/${resumed.id}/resume`, {})).status).toBe(409);
  });

  gvisorOnly('starts an app conversation and serves its events through the proxy, search and WebSocket', async () => {
    const ready = await cp.request('POST', '/api/v1/app-conversations?wait=true', { initial_message: message('Hello, sandbox') }, AppConversationSchema);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ sandbox_status: 'RUNNING', execution_status: 'idle', llm_model: 'openai/scripted' });
    const { id, sandbox_id: sandboxId } = ready.body;

    const search = await cp.request('GET', `/api/v1/app-conversations/${id}/events/search?kind=MessageEvent`, undefined, EventPageSchema);
    expect(search.body.items).toHaveLength(1);
    expect(search.body.items[0]).toMatchObject({ source: 'user', llm_message: message('Hello, sandbox') });
    const proxied = await cp.request('GET', `/api/v1/sandboxes/${sandboxId}/agent/api/conversations/${id}/events/search?body=SANDBOX`, undefined, EventPageSchema);
    expect(proxied.body.items.map((e) => e.id)).toEqual([search.body.items[0]?.id]);

    const frames: Record<string, unknown>[] = [];
    const ws = new WebSocket(`${cp.url.replace('http', 'ws')}/api/v1/sandboxes/${sandboxId}/agent/sockets/events/${id}?resend_all=true`, {
      headers: { authorization: `Bearer ${cp.apiKey}` },
    });
    ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
    await vi.waitFor(() => expect(frames.map((f) => f.kind)).toEqual(['ConversationStateUpdateEvent', 'MessageEvent']), { timeout: 15_000 });
    await cp.request('POST', `/api/v1/app-conversations/${id}/events`, message('and one more'));
    await vi.waitFor(() => expect(frames.at(-1)).toMatchObject({ kind: 'MessageEvent', llm_message: message('and one more') }), {
      timeout: 15_000,
    });
    ws.close();

    // A paused sandbox is resumed when its conversation is read, and its events survived the pause.
    await cp.request('POST', `/api/v1/sandboxes/${sandboxId}/pause`, {});
    await cp.sandboxUntil(sandboxId, 'PAUSED');
    const afterPause = await cp.request('GET', `/api/v1/app-conversations/${id}/events/search?kind=MessageEvent`, undefined, EventPageSchema);
    expect(afterPause.status).toBe(200);
    expect(afterPause.body.items).toHaveLength(2);
  });

  gvisorOnly('runs the agent loop inside the sandbox: real commands in its terminal, real files from its editor', async () => {
    const { sandbox, bash } = await startRunningSandbox(cp);
    script.push(
      toolCalls([{ name: 'terminal', arguments: { command: 'uname -s && whoami && cat /etc/debian_version' } }]),
      toolCalls([{ name: 'file_editor', arguments: { command: 'create', path: '/workspace/hello.txt', file_text: 'hello from the agent\n' } }]),
      toolCalls([{ name: 'finish', arguments: { message: 'Done' } }]),
    );

    const ready = await cp.request('POST', '/api/v1/app-conversations?wait=true', {
      sandbox_id: sandbox.id,
      initial_message: { ...message('Check the system and write hello.txt'), run: true },
    }, AppConversationSchema);
    expect(ready.status).toBe(200);
    const id = ready.body.id;
    await vi.waitFor(
      async () => expect((await cp.request('GET', `/api/v1/app-conversations/${id}`, undefined, AppConversationSchema)).body.execution_status).toBe('finished'),
      { timeout: 60_000, interval: 200 },
    );

    const observations = (await cp.request('GET', `/api/v1/app-conversations/${id}/events/search?kind=ObservationEvent`, undefined, pageSchema(ObservationEventSchema))).body.items;
    expect(observations.map((e) => e.observation.kind)).toEqual(['TerminalObservation', 'FileEditorObservation', 'FinishObservation']);
    const terminalText = (observations[0]?.observation.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');
    expect(terminalText).toContain('Linux');
    expect(terminalText).toContain('openhands');
    expect(terminalText).toMatch(/\b12\.\d+/);
    expect(await bash('cat /workspace/hello.txt')).toMatchObject({ exit_code: 0, stdout: 'hello from the agent\n' });
  });
});
