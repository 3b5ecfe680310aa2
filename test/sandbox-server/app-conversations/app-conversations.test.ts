import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { z } from 'zod';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { appConversationStartTasks, sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema, MessageEventSchema } from '../../../src/events/index.js';
import {
  AppConversationPageSchema,
  AppConversationSchema,
  AppConversationStartTaskPageSchema,
  AppConversationStartTaskSchema,
} from '../../../src/sandbox-server/models/app-conversation.js';
import { LifecycleEventPageSchema } from '../../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { ErrorDetailSchema, ValidationErrorSchema } from '../../helpers/answer.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { API_KEY, closeServer, type Harness, openHarness, startAgentServerIdleFor, startBrokenAgentServer } from './harness.js';
import { getConversation } from '../../../src/agent-server/services/conversations/get-conversation.js';
import { withCall } from '../../../src/agent-server/agent/llm/usage-metrics.js';

const TASK_FIELDS = [
  'agent_server_url',
  'app_conversation_id',
  'created_at',
  'created_by_user_id',
  'detail',
  'id',
  'log',
  'request',
  'sandbox_id',
  'status',
  'updated_at',
];
const CONVERSATION_FIELDS = [
  'conversation_url',
  'created_at',
  'created_by_user_id',
  'execution_status',
  'git_provider',
  'id',
  'llm_model',
  'metrics',
  'pr_number',
  'sandbox_id',
  'sandbox_status',
  'selected_branch',
  'selected_repository',
  'session_api_key',
  'sub_conversation_ids',
  'tags',
  'title',
  'trigger',
  'updated_at',
];

const EventPageSchema = pageSchema(EventSchema);
const MessageEventPageSchema = pageSchema(MessageEventSchema);
const SandboxBatchSchema = z.array(SandboxInfoSchema.nullable());

const message = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });

describe.each(testDrivers)('app conversations (%s)', (driver) => {
  let handle: DatabaseHandle;
  let h: Harness;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    h = await openHarness(handle);
  });
  afterAll(async () => {
    await h.close();
    await handle.close();
  });

  async function taskUntil(taskId: string, done: (status: string) => boolean) {
    return vi.waitFor(
      async () => {
        const { body } = await h.request('GET', `/api/v1/app-conversations/start-tasks?ids=${taskId}`, undefined, z.array(AppConversationStartTaskSchema));
        const [task] = body;
        expect(task && done(task.status)).toBe(true);
        return task!;
      },
      { timeout: 30_000, interval: 50 },
    );
  }

  async function startReady(body: Record<string, unknown>) {
    const { status, body: task } = await h.request('POST', '/api/v1/app-conversations', body, AppConversationStartTaskSchema);
    expect(status).toBe(200);
    return taskUntil(task.id, (s) => s === 'READY' || s === 'ERROR');
  }

  it('starts a sandbox and a conversation, then serves its events through the control plane', async () => {
    const { status, body: task } = await h.request('POST', '/api/v1/app-conversations', {
      initial_message: message('Hello from the control plane'),
      title: 'First',
      tags: { team: 'infra' },
      secrets: { GITHUB_TOKEN: 'ghp_secret' },
    }, AppConversationStartTaskSchema);
    expect(status).toBe(200);
    expect(Object.keys(task).sort()).toEqual(TASK_FIELDS);
    expect(task.status).toBe('WORKING');
    expect(task.app_conversation_id).toBeNull();
    expect(JSON.stringify(task)).not.toContain('ghp_secret');

    const ready = await taskUntil(task.id, (s) => s === 'READY' || s === 'ERROR');
    expect(ready).toMatchObject({ status: 'READY', detail: null, agent_server_url: `http://127.0.0.1:${h.agentPort}` });
    expect(ready.sandbox_id).toEqual(expect.any(String));
    const [row] = await handle.db.select().from(appConversationStartTasks).where(eq(appConversationStartTasks.id, task.id));
    expect(row?.secrets).toEqual({});
    const taskEvents = (
      await h.request(
        'GET',
        '/api/v1/events/search?type=start_task.working&type=start_task.waiting_for_sandbox&type=start_task.starting_conversation&type=start_task.ready',
        undefined,
        LifecycleEventPageSchema,
      )
    ).body.items.filter((event) => event.subject_id === task.id);
    expect(taskEvents.map((event) => [event.type, event.previous_status])).toEqual([
      ['start_task.working', null],
      ['start_task.waiting_for_sandbox', 'WORKING'],
      ['start_task.starting_conversation', 'WAITING_FOR_SANDBOX'],
      ['start_task.ready', 'STARTING_CONVERSATION'],
    ]);
    expect(taskEvents.at(-1)?.sandbox_id).toBe(ready.sandbox_id);

    const conversation = (await h.request('GET', `/api/v1/app-conversations/${ready.app_conversation_id}`, undefined, AppConversationSchema)).body;
    expect(Object.keys(conversation).sort()).toEqual(CONVERSATION_FIELDS);
    expect(conversation).toMatchObject({
      id: ready.app_conversation_id,
      sandbox_id: ready.sandbox_id,
      title: 'First',
      tags: { team: 'infra' },
      llm_model: 'test-model',
      sandbox_status: 'RUNNING',
      execution_status: 'idle',
      conversation_url: `http://127.0.0.1:${h.agentPort}/api/conversations/${ready.app_conversation_id}`,
    });
    const [sandbox] = await handle.db.select().from(sandboxes).where(eq(sandboxes.id, ready.sandbox_id ?? ''));
    expect(conversation.session_api_key).toBe(sandbox?.sessionApiKey);

    expect(conversation.metrics).toBeNull();
    // What the agent-server's LLM calls cost is read live from it, as OpenHands' MetricsSnapshot.
    const agentConversation = h.agent.ctx.conversations.require(ready.app_conversation_id ?? '');
    const stats = withCall(
      { usage_to_metrics: {} },
      {
        usageId: 'default',
        model: 'test-model',
        responseId: 'chatcmpl-1',
        usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, cache_read_tokens: 100, cache_write_tokens: 0, reasoning_tokens: 7 },
        cost: 0.0125,
        latencyMs: 800,
        maxBudgetPerTask: null,
        at: Date.now() / 1000,
      },
    );
    await h.agent.ctx.conversations.changeMetadata(agentConversation, { stats });
    const withMetrics = (await h.request('GET', `/api/v1/app-conversations/${ready.app_conversation_id}`, undefined, AppConversationSchema)).body;
    expect(withMetrics.metrics).toMatchObject({
      model_name: 'test-model',
      accumulated_cost: 0.0125,
      accumulated_token_usage: { prompt_tokens: 120, completion_tokens: 30, cache_read_tokens: 100, reasoning_tokens: 7 },
    });

    // The agent-server got the LLM settings, but they are never shown back.
    const info = getConversation(h.agent.ctx, ready.app_conversation_id ?? '');
    expect(JSON.stringify(info)).not.toContain('sk-never-shown');
    expect(JSON.stringify(conversation)).not.toContain('sk-never-shown');

    const search = await h.request('GET', `/api/v1/app-conversations/${ready.app_conversation_id}/events/search?kind=MessageEvent`, undefined, MessageEventPageSchema);
    expect(search.status).toBe(200);
    expect(search.body.items).toHaveLength(1);
    expect(search.body.items[0]).toMatchObject({ kind: 'MessageEvent', source: 'user', llm_message: message('Hello from the control plane') });

    const proxied = await h.request(
      'GET',
      `/api/v1/sandboxes/${ready.sandbox_id}/agent/api/conversations/${ready.app_conversation_id}/events/search?body=CONTROL%20plane`,
      undefined,
      EventPageSchema,
    );
    expect(proxied.status).toBe(200);
    expect(proxied.body.items.map((e) => e.id)).toEqual([search.body.items[0]?.id]);
  });

  it('passes the spec 4.1 validation of event search through', async () => {
    const ready = await startReady({});
    const { status, body } = await h.request('GET', `/api/v1/app-conversations/${ready.app_conversation_id}/events/search?limit=101`, undefined, ValidationErrorSchema);
    expect(status).toBe(422);
    expect(body.detail[0]?.loc).toEqual(['query', 'limit']);
  });

  it("serves OpenHands' app-server event routes: search by kind__eq, count, a batch by id, 400 past 100 ids", async () => {
    const ready = await startReady({ initial_message: message('peer routes') });
    const id = ready.app_conversation_id;
    const base = `/api/v1/conversation/${id}/events`;
    const search = await h.request('GET', `${base}/search?kind__eq=openhands.sdk.event.llm_convertible.message.MessageEvent&limit=5`, undefined, EventPageSchema);
    expect(search.status).toBe(200);
    expect(search.body.items.map((event) => event.kind)).toEqual(['MessageEvent']);
    const all = await h.request('GET', `${base}/search?sort_order=TIMESTAMP_DESC`, undefined, EventPageSchema);
    expect((await h.request('GET', `${base}/count`)).body).toBe(all.body.items.length);
    expect((await h.request('GET', `${base}/count?kind__eq=MessageEvent`)).body).toBe(1);

    const messageId = search.body.items[0]?.id;
    const batch = await h.request('GET', `${base}?id=${messageId}&id=no-such-event`);
    expect(batch).toEqual({ status: 200, body: [search.body.items[0], null] });
    const tooMany = Array.from({ length: 101 }, (_, i) => `id=e${i}`).join('&');
    expect(await h.request('GET', `${base}?${tooMany}`)).toEqual({
      status: 400,
      body: { detail: 'Cannot request more than 100 events at once, got 101' },
    });
    expect((await h.request('GET', base)).status).toBe(422);
    expect((await h.request('GET', `${base}/search?limit=0`)).status).toBe(422);
    expect((await h.request('GET', `${base}/search?limit=101`)).status).toBe(422);
    expect((await h.request('GET', `/api/v1/conversation/${crypto.randomUUID()}/events/search`)).status).toBe(404);
  });

  it('answers with the AppConversation when asked to wait, and starts a second conversation in the same sandbox', async () => {
    const first = await h.request('POST', '/api/v1/app-conversations?wait=true', { initial_message: message('one') }, AppConversationSchema);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(CONVERSATION_FIELDS);
    expect(first.body.sandbox_status).toBe('RUNNING');

    const second = await h.request('POST', '/api/v1/app-conversations?wait=true', {
      sandbox_id: first.body.sandbox_id,
      initial_message: message('two'),
    }, AppConversationSchema);
    expect(second.status).toBe(200);
    expect(second.body.sandbox_id).toBe(first.body.sandbox_id);
    expect(second.body.id).not.toBe(first.body.id);
  });

  it('streams live events over the proxied WebSocket and takes messages sent through the control plane', async () => {
    const ready = await startReady({ initial_message: message('history') });
    const id = ready.app_conversation_id;
    const ws = new WebSocket(`${h.url.replace('http', 'ws')}/api/v1/app-conversations/${id}/events/socket?resend_all=true`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    const frames: unknown[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
    await vi.waitFor(() => expect(frames).toHaveLength(2), { timeout: 10_000 });
    expect(frames[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });
    expect(frames[1]).toMatchObject({ kind: 'MessageEvent', llm_message: message('history') });

    const sent = await h.request('POST', `/api/v1/app-conversations/${id}/events`, message('live'));
    expect(sent).toEqual({ status: 200, body: { success: true } });
    await vi.waitFor(() => expect(frames).toHaveLength(3), { timeout: 10_000 });
    expect(frames[2]).toMatchObject({ kind: 'MessageEvent', source: 'user', llm_message: message('live') });
    ws.close();
  });

  it('refuses a WebSocket without the API key', async () => {
    const ready = await startReady({});
    const ws = new WebSocket(`${h.url.replace('http', 'ws')}/api/v1/app-conversations/${ready.app_conversation_id}/events/socket`);
    const status = await new Promise<number>((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(401);
  });

  it('resumes a paused sandbox when one of its conversations is accessed', async () => {
    const ready = await startReady({ initial_message: message('resume me') });
    expect((await h.request('POST', `/api/v1/sandboxes/${ready.sandbox_id}/pause`, {})).status).toBe(200);
    await vi.waitFor(
      async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${ready.sandbox_id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('PAUSED'),
      { timeout: 10_000, interval: 50 },
    );
    const paused = (await h.request('GET', `/api/v1/app-conversations/${ready.app_conversation_id}`, undefined, AppConversationSchema)).body;
    expect(paused).toMatchObject({ sandbox_status: 'PAUSED', execution_status: null, conversation_url: null, session_api_key: null });

    const search = await h.request('GET', `/api/v1/app-conversations/${ready.app_conversation_id}/events/search`, undefined, EventPageSchema);
    expect(search.status).toBe(200);
    expect(search.body.items).toHaveLength(1);
    expect((await h.request('GET', `/api/v1/sandboxes?id=${ready.sandbox_id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING');
  });

  it('does not resume a paused sandbox through the proxy when its spec says so (409)', async () => {
    const spec = await h.request('POST', '/api/v1/sandbox-specs', { id: `no-resume-${driver}`, image: 'img:1', resume_on_access: false });
    expect(spec.status).toBe(201);
    const sandbox = (await h.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: `no-resume-${driver}` }, SandboxInfoSchema)).body;
    await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${sandbox.id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING'), {
      timeout: 10_000,
      interval: 50,
    });
    await h.request('POST', `/api/v1/sandboxes/${sandbox.id}/pause`, {});
    const proxied = await h.request('GET', `/api/v1/sandboxes/${sandbox.id}/agent/api/conversations/count`, undefined, ErrorDetailSchema);
    expect(proxied.status).toBe(409);
    expect(proxied.body.detail).toMatch(/is paused; resume it first/);
  });

  it('follows a sandbox whose agent-server moved, and refuses one paused after its target was remembered', async () => {
    const specId = `moved-${driver}`;
    expect((await h.request('POST', '/api/v1/sandbox-specs', { id: specId, image: 'img:1', resume_on_access: false })).status).toBe(201);
    const sandbox = (await h.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema)).body;
    await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${sandbox.id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING'), {
      timeout: 10_000,
      interval: 50,
    });
    const count = `/api/v1/sandboxes/${sandbox.id}/agent/api/conversations/count`;
    expect((await h.request('GET', count)).status).toBe(200);
    const moved = await startBrokenAgentServer();
    try {
      // The reconciler sees the new host port and writes it; the proxy must not keep the old one.
      h.routes.set(sandbox.id, moved.port);
      await vi.waitFor(async () => expect(await h.request('GET', count)).toEqual({ status: 500, body: { detail: 'disk full' } }), {
        timeout: 10_000,
        interval: 50,
      });
    } finally {
      h.routes.delete(sandbox.id);
      await closeServer(moved.server);
    }
    await vi.waitFor(async () => expect((await h.request('GET', count)).status).toBe(200), { timeout: 10_000, interval: 50 });
    expect((await h.request('POST', `/api/v1/sandboxes/${sandbox.id}/pause`, {})).status).toBe(200);
    // Paused on request, before the reconciler has written anything: refused at once, not forwarded.
    const proxied = await h.request('GET', count, undefined, ErrorDetailSchema);
    expect([proxied.status, proxied.body.detail]).toEqual([409, expect.stringMatching(/is paused; resume it first/)]);
  });

  it('still refuses a bad key, resumes a paused sandbox and bridges a WebSocket once the proxy remembers the target', async () => {
    const sandbox = (await h.request('POST', '/api/v1/sandboxes', {}, SandboxInfoSchema)).body.id;
    const proxied = `/api/v1/sandboxes/${sandbox}/agent`;
    await vi.waitFor(async () => expect((await h.request('GET', `${proxied}/api/conversations/count`)).status).toBe(200), {
      timeout: 10_000,
      interval: 50,
    });
    const withKey = async (authorization?: string) => {
      const res = await fetch(`${h.url}${proxied}/api/conversations/count`, { headers: authorization ? { authorization } : {} });
      return { status: res.status, body: await res.json(), challenge: res.headers.get('www-authenticate') };
    };
    expect(await withKey()).toEqual({ status: 401, body: { detail: 'Not authenticated' }, challenge: 'Bearer' });
    expect(await withKey('Bearer wrong-key')).toEqual({ status: 401, body: { detail: 'Invalid API key' }, challenge: 'Bearer' });

    const ws = new WebSocket(`${h.url.replace('http', 'ws')}${proxied}/sockets/bash-events`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const reply = new Promise<unknown>((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send('not a command');
    expect(await reply).toMatchObject({ kind: 'BashError' });
    ws.close();

    expect((await h.request('POST', `/api/v1/sandboxes/${sandbox}/pause`, {})).status).toBe(200);
    await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${sandbox}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('PAUSED'), {
      timeout: 10_000,
      interval: 50,
    });
    expect((await h.request('GET', `${proxied}/api/conversations/count`)).status).toBe(200);
    expect((await h.request('GET', `/api/v1/sandboxes?id=${sandbox}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING');
  });

  it('counts traffic through the proxy and its agent\'s own work as activity, so idle auto-pause spares a sandbox in use', async () => {
    const specId = `idle-${driver}`;
    expect((await h.request('POST', '/api/v1/sandbox-specs', { id: specId, image: 'img:1', idle_pause_seconds: 600 })).status).toBe(201);
    const used = (await h.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema)).body.id;
    const idle = (await h.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema)).body.id;
    const working = (await h.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema)).body.id;
    for (const id of [used, idle, working]) {
      await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING'), {
        timeout: 10_000,
        interval: 50,
      });
    }
    // Nearly idle (590 of 600 s), so that a sweep between this write and the proxy's activity
    // write, which lands in the background, cannot pause it; the activity must bring it to now.
    await handle.db
      .update(sandboxes)
      .set({ lastActiveAt: new Date(Date.now() - 590_000) })
      .where(eq(sandboxes.id, used));
    expect((await h.request('GET', `/api/v1/sandboxes/${used}/agent/alive`)).status).toBe(200);
    const lastActive = async () => (await handle.db.select().from(sandboxes).where(eq(sandboxes.id, used)))[0]?.lastActiveAt.getTime() ?? 0;
    await vi.waitFor(async () => expect(Date.now() - (await lastActive())).toBeLessThan(60_000), { timeout: 10_000, interval: 50 });
    // No traffic for an hour reached either of these; one agent-server says its agent is at work
    // (a long command, no client attached), the other that its agents did nothing for two hours.
    const [busyAgent, idleAgent] = [await startAgentServerIdleFor(0), await startAgentServerIdleFor(7_200)];
    try {
      h.routes.set(working, busyAgent.port);
      h.routes.set(idle, idleAgent.port);
      const agentPorts = async () =>
        (await handle.db.select().from(sandboxes).where(inArray(sandboxes.id, [working, idle]))).map((row) => [row.id, row.hostPorts?.['AGENT_SERVER']] as const);
      await vi.waitFor(async () => expect(new Map(await agentPorts())).toEqual(new Map([[working, busyAgent.port], [idle, idleAgent.port]])), {
        timeout: 10_000,
        interval: 50,
      });
      await handle.db
        .update(sandboxes)
        .set({ lastActiveAt: new Date(Date.now() - 3_600_000) })
        .where(inArray(sandboxes.id, [idle, working]));

      await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${idle}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('PAUSED'), {
        timeout: 10_000,
        interval: 50,
      });
      const statuses = (await h.request('GET', `/api/v1/sandboxes?id=${used}&id=${working}`, undefined, SandboxBatchSchema)).body.map((sandbox) => sandbox?.status);
      expect(statuses).toEqual(['RUNNING', 'RUNNING']);
      const workingRow = (await handle.db.select().from(sandboxes).where(eq(sandboxes.id, working)))[0];
      expect(Date.now() - (workingRow?.lastActiveAt.getTime() ?? 0)).toBeLessThan(60_000);
    } finally {
      h.routes.delete(working);
      h.routes.delete(idle);
      await closeServer(busyAgent.server);
      await closeServer(idleAgent.server);
    }
  });

  it('counts frames over a proxied WebSocket as activity, so a client on one long-lived socket keeps its sandbox in use', async () => {
    const sandbox = (await h.request('POST', '/api/v1/sandboxes', {}, SandboxInfoSchema)).body.id;
    await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${sandbox}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING'), {
      timeout: 10_000,
      interval: 50,
    });
    const ws = new WebSocket(`${h.url.replace('http', 'ws')}/api/v1/sandboxes/${sandbox}/agent/sockets/bash-events`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    const lastActive = async () => (await handle.db.select().from(sandboxes).where(eq(sandboxes.id, sandbox)))[0]?.lastActiveAt.getTime() ?? 0;
    const beforeOpen = Date.now();
    await new Promise((resolve) => ws.once('open', resolve));
    // The upgrade request itself counts, written in the background: let that write land first.
    await vi.waitFor(async () => expect(await lastActive()).toBeGreaterThanOrEqual(beforeOpen), { timeout: 10_000, interval: 50 });
    const longAgo = new Date(Date.now() - 3_600_000);
    await handle.db.update(sandboxes).set({ lastActiveAt: longAgo }).where(eq(sandboxes.id, sandbox));

    // No request reaches the sandbox any more: only frames on the socket opened before.
    await vi.waitFor(
      async () => {
        ws.send('not a command');
        expect(await lastActive()).toBeGreaterThan(longAgo.getTime());
      },
      { timeout: 10_000, interval: 250 },
    );
    ws.close();
  });

  it('writes proxied traffic as activity at most once a second per sandbox, however many requests pass', async () => {
    const sandbox = (await h.request('POST', '/api/v1/sandboxes', {}, SandboxInfoSchema)).body.id;
    await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/sandboxes?id=${sandbox}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING'), {
      timeout: 10_000,
      interval: 50,
    });
    const lastActive = async () => (await handle.db.select().from(sandboxes).where(eq(sandboxes.id, sandbox)))[0]?.lastActiveAt.getTime() ?? 0;
    const stored = new Set<number>();
    let requests = 0;
    let sending = true;
    // Every value the activity column takes while requests pass for 2.5 s: each write lands once
    // and stays at least a second, so polling every 20 ms sees them all.
    const watching = (async () => {
      while (sending) {
        stored.add(await lastActive());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const began = Date.now();
    while (Date.now() - began < 2_500) {
      expect((await h.request('GET', `/api/v1/sandboxes/${sandbox}/agent/alive`)).status).toBe(200);
      requests++;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    sending = false;
    await watching;
    stored.add(await lastActive());

    const written = [...stored].filter((at) => at >= began).sort((a, b) => a - b);
    expect(written.length).toBeGreaterThanOrEqual(2);
    expect(requests).toBeGreaterThan(written.length * 5);
    for (let i = 1; i < written.length; i++) expect(written[i]! - written[i - 1]!).toBeGreaterThanOrEqual(999);
  });

  it('ends in ERROR with a detail for an unknown sandbox, a deleted sandbox and a failing agent-server', async () => {
    const unknown = await startReady({ sandbox_id: 'no-such-sandbox' });
    expect(unknown).toMatchObject({ status: 'ERROR', detail: 'Sandbox not found' });
    const unknownWait = await h.request('POST', '/api/v1/app-conversations?wait=true', { sandbox_id: 'no-such-sandbox' }, ErrorDetailSchema);
    expect(unknownWait.status).toBe(404);
    expect(unknownWait.body.detail).toMatch(/^Start task .* failed: Sandbox not found$/);

    const doomed = (await h.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body;
    await h.request('DELETE', `/api/v1/sandboxes/${doomed.id}`);
    const deleted = await h.request('POST', '/api/v1/app-conversations?wait=true', { sandbox_id: doomed.id }, ErrorDetailSchema);
    expect(deleted.status).toBe(409);
    expect(deleted.body.detail).toMatch(/has been deleted/);

    const broken = await startBrokenAgentServer();
    try {
      // Routed before its container exists, so it never answers from the good agent-server.
      const release = h.fake.holdCreates();
      const sandbox = (await h.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body;
      h.routes.set(sandbox.id, broken.port);
      release();
      const failed = await h.request('POST', '/api/v1/app-conversations?wait=true', { sandbox_id: sandbox.id }, ErrorDetailSchema);
      expect(failed.status).toBe(502);
      expect(failed.body.detail).toMatch(/Agent server answered 500 to POST \/api\/conversations: .*disk full/);
    } finally {
      await closeServer(broken.server);
    }
  });

  it('finishes a task that was WAITING_FOR_SANDBOX when the control plane restarted', async () => {
    const release = h.fake.holdCreates();
    const { body: task } = await h.request('POST', '/api/v1/app-conversations', { initial_message: message('survive a restart') }, AppConversationStartTaskSchema);
    await taskUntil(task.id, (s) => s === 'WAITING_FOR_SANDBOX');
    // The sandbox comes up while no control plane is working on the task.
    await h.restartControlPlane({ afterTasksStopped: release });
    const ready = await taskUntil(task.id, (s) => s === 'READY' || s === 'ERROR');
    expect(ready.status).toBe('READY');
    const search = await h.request('GET', `/api/v1/app-conversations/${ready.app_conversation_id}/events/search`, undefined, MessageEventPageSchema);
    expect(search.body.items.map((e) => e.llm_message.content?.[0])).toEqual([expect.objectContaining({ text: 'survive a restart' })]);
    expect(h.fake.calls.filter((c) => c.verb === 'create' && c.target === ready.sandbox_id)).toHaveLength(1);
  });

  it('searches, counts, pages, patches and deletes app conversations', async () => {
    const titles = ['alpha report', 'beta report', 'gamma notes'];
    const ids: string[] = [];
    for (const title of titles) ids.push((await h.request('POST', '/api/v1/app-conversations?wait=true', { title }, AppConversationSchema)).body.id);

    const reports = await h.request('GET', '/api/v1/app-conversations/search?title__contains=REPORT&sort_order=TITLE', undefined, AppConversationPageSchema);
    expect(reports.body.items.map((c) => c.title)).toEqual(['alpha report', 'beta report']);
    expect((await h.request('GET', '/api/v1/app-conversations/count?title__contains=report')).body).toBe(2);

    const seen: string[] = [];
    let page: string | null = null;
    do {
      const query: string = `/api/v1/app-conversations/search?limit=2&sort_order=CREATED_AT${page ? `&page_id=${page}` : ''}`;
      const { body } = await h.request('GET', query, undefined, AppConversationPageSchema);
      seen.push(...body.items.map((c) => c.id));
      page = body.next_page_id;
    } while (page);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe((await h.request('GET', '/api/v1/app-conversations/count')).body);
    expect(seen.slice(-3)).toEqual(ids);

    const patched = await h.request('PATCH', `/api/v1/app-conversations/${ids[2]}`, { title: 'renamed', tags: { kind: 'notes' } });
    expect(patched.body).toMatchObject({ title: 'renamed', tags: { kind: 'notes' } });

    const batch = await h.request('GET', `/api/v1/app-conversations?ids=${ids[0]}&ids=00000000-0000-4000-8000-000000000000`, undefined, z.array(AppConversationSchema.nullable()));
    expect(batch.body.map((c) => c?.id ?? null)).toEqual([ids[0], null]);

    expect((await h.request('DELETE', `/api/v1/app-conversations/${ids[2]}`)).body).toEqual({ success: true });
    expect(await h.request('GET', `/api/v1/app-conversations/${ids[2]}`)).toEqual({ status: 404, body: { detail: 'App conversation not found' } });
    expect(await h.request('DELETE', `/api/v1/app-conversations/${ids[2]}`)).toEqual({ status: 404, body: { detail: 'App conversation not found' } });
    const tasks = await h.request('GET', '/api/v1/app-conversations/start-tasks/search?status=READY&limit=1', undefined, AppConversationStartTaskPageSchema);
    expect(tasks.body.items).toHaveLength(1);
    expect(tasks.body.next_page_id).toEqual(expect.any(String));
  });

  it('answers bad input with 4xx bodies', async () => {
    expect(await h.request('POST', '/api/v1/app-conversations', { conversation_id: 'not-a-uuid' })).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ['body', 'conversation_id'], type: 'uuid_parsing' }] },
    });
    expect((await h.request('GET', '/api/v1/app-conversations/not-a-uuid', undefined, ValidationErrorSchema)).body.detail[0]?.loc).toEqual(['path', 'id']);
    expect((await h.request('GET', '/api/v1/app-conversations/search?limit=0')).status).toBe(422);
    expect((await h.request('GET', '/api/v1/app-conversations/search?created_at__gte=yesterday')).status).toBe(422);
    expect((await h.request('GET', '/api/v1/app-conversations/search?page_id=nope')).body).toEqual({
      detail: [{ loc: ['query', 'page_id'], msg: 'Unknown page_id', type: 'value_error' }],
    });
    const many = Array.from({ length: 101 }, (_, i) => `ids=${i}`).join('&');
    expect((await h.request('GET', `/api/v1/app-conversations?${many}`)).status).toBe(400);
    expect((await h.request('GET', `/api/v1/app-conversations/start-tasks?${many}`)).status).toBe(400);
    expect(await h.request('GET', '/api/v1/sandboxes/nope/agent/alive')).toEqual({ status: 404, body: { detail: 'Sandbox not found' } });
    const plain = await h.request('GET', `/api/v1/app-conversations/00000000-0000-4000-8000-000000000000/events/socket`);
    expect(plain).toEqual({ status: 426, body: { detail: 'This route speaks WebSocket: connect with an Upgrade: websocket request' } });
    const unauthenticated = await fetch(`${h.url}/api/v1/app-conversations/search`);
    expect(unauthenticated.status).toBe(401);
  });
});

describe('app conversations without a server-wide model', () => {
  it('refuses a start without llm_model (422) and accepts one that names it', async () => {
    const handle = await openTestDatabase('pglite');
    const h = await openHarness(handle, { llmModel: null });
    try {
      expect(await h.request('POST', '/api/v1/app-conversations', {})).toMatchObject({
        status: 422,
        body: { detail: [{ loc: ['body', 'llm_model'], type: 'missing' }] },
      });
      const ok = await h.request('POST', '/api/v1/app-conversations?wait=true', { llm_model: 'openai/gpt-4o' });
      expect(ok.body).toMatchObject({ llm_model: 'openai/gpt-4o', sandbox_status: 'RUNNING' });
    } finally {
      await h.close();
      await handle.close();
    }
  });
});
