import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { ConversationInfoSchema } from '../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema, type Event } from '../../src/events/index.js';
import { buildAgentServerImage } from '../../src/sandbox-server/image/index.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { ensureBuilt } from '../helpers/build.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const SANDBOX_LLM_PORT = 18080;
const FIXTURES = join(import.meta.dirname, 'fixtures');
const checkoutTag = createHash('sha256').update(import.meta.dirname).digest('hex').slice(0, 8);

/**
 * The agent's terminal and grep in real sandboxes under gVisor, through the control plane: once in
 * an image with tmux, ripgrep and python3 (`sandbox-base-full:local`, from
 * ../shared/env/more-images.sh) and once in the plain base image, which has neither tmux nor
 * ripgrep, so the terminal falls back to script and grep to find and grep.
 */
describe.runIf(docker).each([
  { base: 'sandbox-base-full:local', terminal: 'tmux', search: 'ripgrep', python: true },
  { base: TEST_BASE_IMAGE, terminal: 'script', search: 'find and grep', python: false },
])('the agent tools in a sandbox of $base ($terminal, $search) under runsc', ({ base, python }) => {
  let cp: E2eControlPlane;
  const engine = docker as Docker;
  const image = `sandbox-server/agent-server:e2e-tools-${base.replace(/[^a-z0-9]+/g, '-')}-${checkoutTag}`;

  beforeAll(async () => {
    await ensureBuilt();
    await buildAgentServerImage({ baseImage: base, tag: image });
    cp = await startE2eControlPlane({
      AGENT_SERVER_IMAGE: image,
      SANDBOX_BASE_IMAGE: base,
      SANDBOX_RUNTIME: 'runsc',
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: `http://127.0.0.1:${SANDBOX_LLM_PORT}/v1`,
    });
  }, 300_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  it('offers only the chosen terminal and grep, runs an interactive program in the terminal, and greps', async () => {
    const sandbox = (await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body;
    await cp.sandboxUntil(sandbox.id, 'RUNNING');
    const agent = (path: string) => `/api/v1/sandboxes/${sandbox.id}/agent${path}`;
    const bash = async (command: string) => (await cp.request('POST', agent('/api/bash/execute_bash_command'), { command, timeout: 30 }, BashOutputSchema)).body;
    const upload = async (path: string, content: string) => {
      const form = new FormData();
      form.append('file', new Blob([content]), 'file');
      const response = await fetch(`${cp.url}${agent(`/api/file/upload?path=${encodeURIComponent(path)}`)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${cp.apiKey}` },
        body: form,
      });
      expect(response.status).toBe(200);
    };

    const interactive = python
      ? [
          { tool_calls: [{ name: 'terminal', arguments: { command: 'python3 -q', timeout: 3 } }] },
          { tool_calls: [{ name: 'terminal', arguments: { command: 'print(6 * 7)', is_input: true, timeout: 3 } }] },
          { tool_calls: [{ name: 'terminal', arguments: { command: 'C-d', is_input: true, timeout: 10 } }] },
        ]
      : [
          { tool_calls: [{ name: 'terminal', arguments: { command: 'read -r -p "Answer? " a; echo "got $((a * 2))"', timeout: 3 } }] },
          { tool_calls: [{ name: 'terminal', arguments: { command: '21', is_input: true, timeout: 10 } }] },
        ];
    const script = [
      { tool_calls: [{ name: 'terminal', arguments: { command: 'tty; echo "$TERM"; mkdir -p src && echo "const needle = 1;" > src/found.ts && echo plain > src/other.ts' } }] },
      ...interactive,
      { tool_calls: [{ name: 'grep', arguments: { pattern: 'NEEDLE\\s*=' } }] },
      { tool_calls: [{ name: 'finish', arguments: { message: 'Done' } }] },
    ];
    await upload('/tmp/llm/server.mjs', await readFile(join(FIXTURES, 'scripted-llm-server.mjs'), 'utf8'));
    await upload('/tmp/llm/script.json', JSON.stringify(script));
    const launched = await bash(
      `setsid node /tmp/llm/server.mjs ${SANDBOX_LLM_PORT} /tmp/llm/script.json > /tmp/llm/log 2>&1 < /dev/null & ` +
        `for i in $(seq 100); do node -e "fetch('http://127.0.0.1:${SANDBOX_LLM_PORT}/').then(() => process.exit(0), () => process.exit(1))" && exit 0; sleep 0.1; done; exit 1`,
    );
    expect(launched.exit_code).toBe(0);

    const created = await cp.request('POST', agent('/api/conversations'), {
      agent: {
        kind: 'Agent',
        llm: { model: 'openai/scripted', base_url: `http://127.0.0.1:${SANDBOX_LLM_PORT}/v1`, api_key: 'sk-none' },
        tools: [{ name: 'TerminalTool' }, { name: 'GrepTool' }],
      },
      workspace: { working_dir: '/workspace' },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'Find the needle' }], run: true },
    }, ConversationInfoSchema);
    expect(created.status).toBe(201);
    const id = created.body.id;
    await vi.waitFor(
      async () => expect((await cp.request('GET', agent(`/api/conversations/${id}`), undefined, ConversationInfoSchema)).body.execution_status).toBe('finished'),
      { timeout: 90_000, interval: 250 },
    );
    const events: Event[] = (await cp.request('GET', agent(`/api/conversations/${id}/events/search?limit=100`), undefined, pageSchema(EventSchema))).body.items;

    const prompt = events.find((e) => e.kind === 'SystemPromptEvent');
    expect(prompt?.kind === 'SystemPromptEvent' ? prompt.tools.map((t) => t.kind) : []).toEqual(['TerminalTool', 'GrepTool', 'FinishTool', 'ThinkTool']);
    const observations = events.flatMap((e) => (e.kind === 'ObservationEvent' ? [e.observation] : []));
    const textOf = (i: number) => (observations[i]?.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');
    expect(observations.map((o) => o.kind)).toEqual([...script.slice(0, -2).map(() => 'TerminalObservation'), 'GrepObservation', 'FinishObservation']);
    expect(textOf(0)).toMatch(/^\/dev\/pts\/\d+\ndumb\n/);
    if (python) {
      expect(observations[1]).toMatchObject({ timeout: true });
      expect(textOf(2)).toMatch(/\b42\n/);
      expect(observations[3]).toMatchObject({ exit_code: 0, timeout: false });
    } else {
      expect(textOf(1)).toContain('Answer? ');
      expect(textOf(2)).toContain('got 42');
      expect(observations[2]).toMatchObject({ exit_code: 0 });
    }
    expect(observations.at(-2)).toMatchObject({ kind: 'GrepObservation', matches: ['/workspace/src/found.ts'], is_error: false });
  });
});
