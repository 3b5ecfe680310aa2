import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConversationInfoSchema } from '../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema, type Event } from '../../src/events/index.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { type E2eControlPlane, startE2eControlPlane } from './harness.js';
import { buildSuiteImage, SANDBOX_LLM_BASE_URL, startRunningSandbox } from './sandbox-agent.js';

const docker = await connectDocker();

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

  beforeAll(async () => {
    cp = await startE2eControlPlane({
      AGENT_SERVER_IMAGE: await buildSuiteImage('tools', base),
      SANDBOX_BASE_IMAGE: base,
      SANDBOX_RUNTIME: 'runsc',
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: SANDBOX_LLM_BASE_URL,
    });
  }, 300_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  it('offers only the chosen terminal and grep, runs an interactive program in the terminal, and greps', async () => {
    const { path: agent, bash, startScriptedLlm } = await startRunningSandbox(cp);

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
    await startScriptedLlm(script);

    const created = await cp.request('POST', agent('/api/conversations'), {
      agent: {
        kind: 'Agent',
        llm: { model: 'openai/scripted', base_url: SANDBOX_LLM_BASE_URL, api_key: 'sk-none' },
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
