/**
 * Fuzzes every operation of the agent-server's /openapi.json through app.request(). The file and
 * bash routes run for real, confined to a temporary workspace (with a FIFO, a directory and a file
 * in it); commands come from a harmless list (with NUL and oversize ones); agents may only reach
 * an LLM on a closed loopback port.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAgentServerApp, type AgentServer } from '../../src/agent-server/app.js';
import { fuzz, fuzzSeed } from './fuzz-run.js';
import { guardLoopbackFetch, idPool } from './fuzz-helpers.js';
import type { Hint } from './schema-arbitrary.js';

const RUNS = Number(process.env['FUZZ_RUNS_AGENT_SERVER'] ?? 5000);
const CLOSED_LOOPBACK_LLM = 'http://127.0.0.1:9/v1';

let root: string;
let workspace: string;
let server: AgentServer;
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = guardLoopbackFetch();
  root = await mkdtemp(join(tmpdir(), 'agent-server-fuzz-'));
  workspace = join(root, 'workspace');
  await mkdir(join(workspace, 'dir'), { recursive: true });
  await writeFile(join(workspace, 'file.txt'), 'hello\n');
  execFileSync('mkfifo', [join(workspace, 'fifo')]);
  server = await createAgentServerApp({ dataDir: join(root, 'data'), sessionKeys: [], workspaceDir: workspace });
});

afterAll(async () => {
  await server?.close();
  restoreFetch?.();
  await rm(root, { recursive: true, force: true });
});

function llm() {
  // No retries: a closed port fails at once, and an agent asked a question answers without waiting.
  return { model: 'fuzz-model', base_url: CLOSED_LOOPBACK_LLM, api_key: 'sk-fuzz-secret', num_retries: 0, timeout: 5 };
}

test('no generated request gets a 5xx, a malformed error or no answer, and the server answers afterwards', { timeout: 600_000 }, async () => {
  const ids = idPool();
  const name = fc.stringMatching(/^[a-zA-Z0-9_-]{1,24}$/);
  const hint: Hint = (field) => {
    if (field === 'llm') return { arbitrary: fc.constant(llm()), exact: true };
    if (field === 'base_url') return { arbitrary: fc.constant(CLOSED_LOOPBACK_LLM), exact: true };
    if (field === 'command') {
      const commands = ['true', 'echo fuzz', 'exit 3', 'printf %s "$PWD"', 'ls', 'echo err >&2', 'true\u0000', 'echo \u0000x', `echo ${'y'.repeat(5000)}`];
      return { arbitrary: fc.constantFrom(...commands), exact: true };
    }
    if (field === 'path') {
      const fixed = ['fifo', 'dir', 'file.txt', 'n'.repeat(300), `dir/${'m'.repeat(300)}/x`, 'missing/x', 'a\u0000b'].map((p) => join(workspace, p));
      return { arbitrary: fc.oneof(fc.constantFrom(workspace, ...fixed, 'relative/x'), name.map((n) => join(workspace, 'up', n))) };
    }
    if (field === 'cwd' || field === 'working_dir') return { arbitrary: fc.constantFrom(workspace, 'dir', '/nonexistent-fuzz-dir', join(workspace, 'file.txt')) };
    if (field === 'timeout') return { arbitrary: fc.integer({ min: 1, max: 3 }) };
    if (/(^|_)ids?$/.test(field)) return { arbitrary: ids.arbitrary };
    return undefined;
  };
  const document = await (await server.app.request('/openapi.json')).json();
  const seed = fuzzSeed();
  const started = Date.now();
  const tally = await fuzz(
    {
      name: 'agent-server',
      document,
      hint,
      send: async (request) => server.app.request(request.url, { method: request.method, headers: request.headers, body: request.body }),
      observe: ids.observe,
      expectedServerErrors: [502],
    },
    { numRuns: RUNS, seed },
  );
  console.log(`fuzz agent-server: seed ${seed}, ${tally.requests} requests over ${tally.operations} operations in ${Date.now() - started} ms, by status ${JSON.stringify(tally.byStatus)}`);
  expect(tally.requests).toBeGreaterThanOrEqual(RUNS);

  // Still serving: a fresh conversation takes an event and finds it, and so does a restart.
  const conversationId = randomUUID();
  const created = await server.app.request('/api/conversations', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ conversation_id: conversationId, agent: { llm: llm() }, workspace: { working_dir: workspace } }),
  });
  expect(created.status).toBe(201);
  const posted = await server.app.request(`/api/conversations/${conversationId}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'still here' }], run: false }),
  });
  expect(posted.status).toBe(200);
  await server.close();
  server = await createAgentServerApp({ dataDir: join(root, 'data'), sessionKeys: [], workspaceDir: workspace });
  expect((await server.app.request('/alive')).status).toBe(200);
  expect((await server.app.request('/api/conversations/search')).status).toBe(200);
  const found = await server.app.request(`/api/conversations/${conversationId}/events/search?body=still`);
  expect(((await found.json()) as { items: unknown[] }).items).toHaveLength(1);
});
