import { request as httpRequest } from 'node:http';
import { eq } from 'drizzle-orm';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmConfig } from '../../../src/agent-server/agent/llm/index.js';
import { LlmError } from '../../../src/agent-server/agent/llm/llm-error.js';
import { logger } from '../../../src/logger.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { llmRelayRoutes, sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { createRelayMetrics } from '../../../src/sandbox-server/llm-relay/relay-metrics.js';
import { RelayRoutes } from '../../../src/sandbox-server/llm-relay/relay-routes.js';
import { type LlmRelayListener, listenLlmRelay } from '../../../src/sandbox-server/llm-relay/relay-server.js';
import type { AppConversationSettings } from '../../../src/sandbox-server/services/app-conversations/context.js';
import { relayedLlm } from '../../../src/sandbox-server/services/app-conversations/relayed-llm.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { type ScriptedLlm, startScriptedLlm, text } from '../../helpers/scripted-llm.js';
import { insertSandbox, insertSpec } from '../reconciler/fixtures.js';

const SERVER_KEY = 'sk-server-key-never-in-a-sandbox';
const OWN_KEY = 'sk-conversation-own-key';
const USAGE = { prompt_tokens: 31, completion_tokens: 7 };

describe.each(testDrivers)('the LLM relay (%s)', (driver) => {
  let handle: DatabaseHandle;
  let llm: ScriptedLlm | undefined;
  let relay: LlmRelayListener;
  let registry: Registry;
  let sandboxId: string;
  let accepting = true;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    registry = new Registry();
    relay = await listenLlmRelay(
      {
        // No cache: each call sees the database as it is, so a deleted sandbox's token stops at once.
        routes: new RelayRoutes(handle.db, { ttlMs: 0, log: logger }),
        serverKey: SERVER_KEY,
        acceptsFrom: () => accepting,
        metrics: createRelayMetrics(registry),
        log: logger,
      },
      '127.0.0.1',
      0,
    );
    const spec = await insertSpec(handle.db);
    sandboxId = (await insertSandbox(handle.db, spec.id, { status: 'RUNNING' })).id;
  });
  afterEach(async () => {
    accepting = true;
    await llm?.close();
    llm = undefined;
  });
  afterAll(async () => {
    await relay.close();
    await handle.close();
  });

  const settings = (baseUrl: string | null): AppConversationSettings => ({
    llm: { model: 'openai/scripted', baseUrl },
    llmRelay: { origin: `http://127.0.0.1:${relay.port}` },
    sandboxStartTimeoutMs: 1000,
  });

  /** The agent's LLM settings for a new conversation, made by the start task's own step. */
  async function agentLlm(model: string, baseUrl: string | null, ownApiKey: string | null = null) {
    const conversationId = crypto.randomUUID();
    const given = await relayedLlm(handle.db, settings(baseUrl), { conversationId, sandboxId, model, ownApiKey });
    return { conversationId, config: { model, base_url: given.base_url, api_key: given.api_key, max_retries: 5, retry_min_wait_ms: 60_000 } satisfies LlmConfig };
  }

  async function usageOf(conversationId: string) {
    const [row] = await handle.db.select().from(llmRelayRoutes).where(eq(llmRelayRoutes.conversationId, conversationId));
    return row && { calls: row.calls, input: row.inputTokens, output: row.outputTokens };
  }

  const DIALECTS = [
    { model: 'openai/scripted', base: (url: string) => url, keyHeader: 'authorization', key: `Bearer ${SERVER_KEY}`, path: '/v1/chat/completions' },
    { model: 'openai/gpt-5-codex', base: (url: string) => url, keyHeader: 'authorization', key: `Bearer ${SERVER_KEY}`, path: '/v1/responses' },
    { model: 'anthropic/claude-sonnet-4-5', base: (url: string) => url, keyHeader: 'x-api-key', key: SERVER_KEY, path: '/v1/messages' },
    { model: 'azure/my-deployment', base: (url: string) => url.replace(/\/v1$/, ''), keyHeader: 'api-key', key: SERVER_KEY, path: '/openai/deployments/my-deployment/chat/completions?api-version=2024-12-01-preview' },
    { model: 'ollama/qwen3', base: (url: string) => url.replace(/\/v1$/, ''), keyHeader: 'authorization', key: `Bearer ${SERVER_KEY}`, path: '/api/chat' },
  ];

  it.each(DIALECTS.flatMap((dialect) => [false, true].map((stream) => ({ ...dialect, stream }))))(
    'relays $model (stream: $stream) with the real key where the dialect puts it, and counts its tokens',
    async ({ model, base, keyHeader, key, path, stream }) => {
      llm = await startScriptedLlm([text('relayed', { usage: USAGE })]);
      const { conversationId, config } = await agentLlm(model, base(llm.baseUrl));
      expect(config.base_url).toContain(`127.0.0.1:${relay.port}`);
      expect(config.api_key).toMatch(/^sk-relay-/);

      const answer = await createLlmClient({ ...config, stream }).complete({ messages: [{ role: 'user', content: 'hi' }] });

      expect(answer.content).toBe('relayed');
      const [received] = llm.requests;
      expect(received?.path).toBe(path);
      expect(received?.headers[keyHeader]).toBe(key);
      expect(JSON.stringify(received?.headers)).not.toContain(config.api_key);
      // Ollama's dialect does not stream: its usage arrives in one body either way.
      await expect.poll(() => usageOf(conversationId)).toEqual({ calls: 1, input: USAGE.prompt_tokens, output: USAGE.completion_tokens });
    },
  );

  it("adds a conversation's own key instead of the server's", async () => {
    llm = await startScriptedLlm([text('own')]);
    const { config } = await agentLlm('openai/scripted', llm.baseUrl, OWN_KEY);
    await createLlmClient(config).complete({ messages: [{ role: 'user', content: 'hi' }] });
    expect(llm.requests[0]?.headers.authorization).toBe(`Bearer ${OWN_KEY}`);
  });

  it('swaps a token in Google\'s key query parameter, and passes the rest of the path and query unchanged', async () => {
    llm = await startScriptedLlm([text('google')]);
    const { config } = await agentLlm('openai/scripted', llm.baseUrl);
    const answer = await post(`${config.base_url}/chat/completions?alt=sse&key=${config.api_key}`, {}, { model: 'scripted', messages: [] });
    expect(answer.status).toBe(200);
    expect(llm.requests[0]?.path).toBe(`/v1/chat/completions?alt=sse&key=${SERVER_KEY}`);
    expect(llm.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('refuses a call without a token, with an unknown one, and with the token of a deleted sandbox, as final answers', async () => {
    llm = await startScriptedLlm([]);
    const { config } = await agentLlm('openai/scripted', llm.baseUrl);
    const none = await post(`${config.base_url}/chat/completions`, {}, {});
    expect(none).toMatchObject({ status: 401, verdict: 'unauthorized' });
    const unknown = await post(`${config.base_url}/chat/completions`, { authorization: 'Bearer sk-relay-guessed' }, {});
    expect(unknown).toMatchObject({ status: 401, verdict: 'unauthorized' });

    const spec = await insertSpec(handle.db);
    const doomed = (await insertSandbox(handle.db, spec.id, { status: 'RUNNING' })).id;
    const given = await relayedLlm(handle.db, settings(llm.baseUrl), { conversationId: crypto.randomUUID(), sandboxId: doomed, model: 'openai/scripted', ownApiKey: null });
    expect((await post(`${given.base_url}/chat/completions`, { authorization: `Bearer ${given.api_key}` }, { messages: [] })).status).toBe(500);
    await handle.db.update(sandboxes).set({ desiredState: 'DELETED' }).where(eq(sandboxes.id, doomed));
    const afterDelete = await post(`${given.base_url}/chat/completions`, { authorization: `Bearer ${given.api_key}` }, {});
    expect(afterDelete).toMatchObject({ status: 401, verdict: 'unauthorized' });
    expect(llm.requests).toHaveLength(1);
  });

  it('sends on LLM calls only: another path of the provider, or another method, is refused', async () => {
    llm = await startScriptedLlm([]);
    const { config } = await agentLlm('openai/scripted', llm.baseUrl);
    const auth = { authorization: `Bearer ${config.api_key}` };
    expect(await post(`${config.base_url}/files`, auth, {})).toMatchObject({ status: 404, verdict: 'refused' });
    expect(await post(`http://127.0.0.1:${relay.port}/other/chat/completions`, auth, {})).toMatchObject({ status: 404, verdict: 'refused' });
    expect(await post(`http://127.0.0.1:${relay.port}//evil.example/v1/chat/completions`, auth, {})).toMatchObject({ status: 404, verdict: 'refused' });
    const get = await fetch(`${config.base_url}/chat/completions`, { headers: auth });
    expect(get.status).toBe(404);
    expect(llm.requests).toHaveLength(0);
  });

  it('fails at once, without retries, when the LLM cannot be reached', async () => {
    const gone = await startScriptedLlm([]);
    await gone.close();
    const { config } = await agentLlm('openai/scripted', gone.baseUrl);
    const started = performance.now();
    const failure = await createLlmClient(config)
      .complete({ messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LlmError);
    expect(failure).toMatchObject({ code: 'LLMConnectionError', final: true });
    expect((failure as LlmError).detail).toMatch(/could not be reached: ECONNREFUSED/);
    expect((failure as LlmError).detail).not.toContain('gave up after');
    // retry_min_wait_ms is a minute: a retry would have shown here.
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it('refuses at once a call to a public provider when there is no key at all, without sending it', async () => {
    llm = await startScriptedLlm([]);
    const conversationId = crypto.randomUUID();
    const noKeys = await listenLlmRelay(
      { routes: new RelayRoutes(handle.db, { log: logger }), serverKey: null, acceptsFrom: () => true, metrics: createRelayMetrics(new Registry()), log: logger },
      '127.0.0.1',
      0,
    );
    try {
      const given = await relayedLlm(handle.db, { ...settings(null), llmRelay: { origin: `http://127.0.0.1:${noKeys.port}` } }, { conversationId, sandboxId, model: 'openai/gpt-4o', ownApiKey: null });
      expect(given.base_url).toBe(`http://127.0.0.1:${noKeys.port}/v1`);
      const failure = await createLlmClient({ model: 'openai/gpt-4o', base_url: given.base_url, api_key: given.api_key })
        .complete({ messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'LLMAuthenticationError', final: true });
      expect((failure as LlmError).detail).toMatch(/no LLM key.*LLM_API_KEY/);
    } finally {
      await noKeys.close();
    }
  });

  it('closes connections from addresses it does not serve before reading a byte', async () => {
    accepting = false;
    await expect(post(`http://127.0.0.1:${relay.port}/v1/chat/completions`, {}, {})).rejects.toThrow(/socket hang up|ECONNRESET/);
  });

  it('counts calls by outcome and tokens by kind in its metrics', async () => {
    llm = await startScriptedLlm([text('one', { usage: USAGE })]);
    const { config } = await agentLlm('openai/scripted', llm.baseUrl);
    await createLlmClient(config).complete({ messages: [{ role: 'user', content: 'hi' }] });
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/sandbox_server_llm_relay_calls_total\{outcome="answered"\} [1-9]/);
    expect(metrics).toMatch(/sandbox_server_llm_relay_tokens_total\{kind="input"\} [1-9]/);
    expect(metrics).toMatch(/sandbox_server_llm_relay_calls_total\{outcome="unauthorized"\} [1-9]/);
  });
});

/** A POST through node:http (fetch would normalise `//` in a path); resolves with the status and the relay's verdict. */
function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; verdict: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const path = url.slice(target.origin.length);
    const request = httpRequest({ host: target.hostname, port: target.port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, verdict: response.headers['x-sandbox-server-llm-relay'] as string | undefined, body: Buffer.concat(chunks).toString() }),
      );
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}
