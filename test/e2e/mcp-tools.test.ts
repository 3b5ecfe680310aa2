import { readFile } from 'node:fs/promises';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConversationInfoSchema } from '../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema, type Event } from '../../src/events/index.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { bundleMcpServers } from '../helpers/mcp-servers.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { type E2eControlPlane, startE2eControlPlane } from './harness.js';
import { buildSuiteImage, SANDBOX_LLM_BASE_URL, startRunningSandbox, waitForLoopbackPort } from './sandbox-agent.js';

const docker = await connectDocker();
const SANDBOX_MCP_PORT = 18090;

/**
 * MCP servers written with the SDK, answering the agent inside a real sandbox under gVisor, through
 * the control plane: one over stdio, started by the agent-server as the agent user, and one over
 * Streamable HTTP on the sandbox's loopback. The agent-server image carries the SDK in its bundle.
 */
describe.runIf(docker)('MCP tools in a sandbox under runsc', () => {
  let cp: E2eControlPlane;
  let bundles: string;
  const engine = docker as Docker;

  beforeAll(async () => {
    bundles = await makeTempDir('mcp-e2e-bundles-');
    cp = await startE2eControlPlane({
      AGENT_SERVER_IMAGE: await buildSuiteImage('mcp', TEST_BASE_IMAGE),
      SANDBOX_BASE_IMAGE: TEST_BASE_IMAGE,
      SANDBOX_RUNTIME: 'runsc',
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: SANDBOX_LLM_BASE_URL,
    });
  }, 300_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
    if (bundles) await removeDir(bundles);
  });

  it('calls a stdio server run as the agent user and a Streamable HTTP server on the sandbox’s loopback', async () => {
    const { path: agent, bash, upload, startScriptedLlm } = await startRunningSandbox(cp);

    const servers = await bundleMcpServers(bundles);
    await upload('/tmp/mcp/stdio.mjs', await readFile(servers.stdio, 'utf8'));
    await upload('/tmp/mcp/http.mjs', await readFile(servers.http, 'utf8'));
    const script = [
      { tool_calls: [{ name: 'local_whoami', arguments: {} }] },
      { tool_calls: [{ name: 'web_add', arguments: { a: 40, b: 2 } }] },
      { tool_calls: [{ name: 'finish', arguments: { message: 'Done' } }] },
    ];
    await startScriptedLlm(script);
    const launched = await bash(`setsid node /tmp/mcp/http.mjs ${SANDBOX_MCP_PORT} > /tmp/mcp/log 2>&1 < /dev/null & (${waitForLoopbackPort(SANDBOX_MCP_PORT)})`);
    expect(launched.exit_code).toBe(0);
    const agentUid = Number((await bash('id -u')).stdout?.trim());

    const created = await cp.request('POST', agent('/api/conversations'), {
      agent: {
        kind: 'Agent',
        llm: { model: 'openai/scripted', base_url: SANDBOX_LLM_BASE_URL, api_key: 'sk-none' },
        tools: [],
        mcp_config: {
          mcpServers: {
            local: { command: 'node', args: ['/tmp/mcp/stdio.mjs'], env: { MCP_TEST_VALUE: 'inside' } },
            web: { url: `http://127.0.0.1:${SANDBOX_MCP_PORT}/mcp` },
          },
        },
      },
      workspace: { working_dir: '/workspace' },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'Use the MCP tools' }], run: true },
    }, ConversationInfoSchema);
    expect(created.status).toBe(201);
    const id = created.body.id;
    await vi.waitFor(
      async () => expect((await cp.request('GET', agent(`/api/conversations/${id}`), undefined, ConversationInfoSchema)).body.execution_status).toBe('finished'),
      { timeout: 90_000, interval: 250 },
    );
    const events: Event[] = (await cp.request('GET', agent(`/api/conversations/${id}/events/search?limit=100`), undefined, pageSchema(EventSchema))).body.items;

    expect(events.filter((e) => e.kind === 'ConversationErrorEvent')).toEqual([]);
    const prompt = events.find((e) => e.kind === 'SystemPromptEvent');
    const definitions = prompt?.kind === 'SystemPromptEvent' ? prompt.tools : [];
    expect(definitions.filter((t) => t.kind === 'MCPToolDefinition').map((t) => t.title)).toEqual(
      ['local', 'web'].flatMap((server) => ['echo', 'add', 'slow', 'picture', 'refuse', 'whoami', 'unlock', 'exit'].map((tool) => `${server}_${tool}`)),
    );
    const observations = events.flatMap((e) => (e.kind === 'ObservationEvent' ? [e.observation] : []));
    expect(observations.map((o) => [o.kind, o.is_error])).toEqual([
      ['MCPToolObservation', false],
      ['MCPToolObservation', false],
      ['FinishObservation', false],
    ]);
    const textOf = (i: number) => (observations[i]?.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    const who = JSON.parse(textOf(0).split('\n')[1] ?? '{}') as { uid: number; cwd: string; value: string };
    // The agent-server runs as root; the server it started runs as the agent, in the workspace.
    expect(agentUid).toBeGreaterThan(0);
    expect(who).toMatchObject({ uid: agentUid, cwd: '/workspace', value: 'inside' });
    expect(textOf(1)).toBe("[Tool 'web_add' executed.]\n42");
  });
});
