import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startRequest, textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { bundleMcpServers, PIXEL_PNG_BASE64, startHttpMcpServer, type HttpMcpServer } from '../../helpers/mcp-servers.js';
import { type ScriptedLlm, startScriptedLlm, toolCalls } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema, type Event } from '../../../src/events/index.js';

/**
 * MCP servers of agent.mcp_config, driven over the agent-server's HTTP routes with a scripted LLM,
 * against real servers written with the SDK: over stdio (a child process) and over Streamable
 * HTTP and SSE on 127.0.0.1.
 */
describe('MCP tools', () => {
  let bundleDir: string;
  let stdioServer: string;
  let workspace: string;
  let llm: ScriptedLlm | undefined;
  let http: HttpMcpServer | undefined;

  beforeAll(async () => {
    bundleDir = await makeTempDir('mcp-server-bundle-');
    stdioServer = (await bundleMcpServers(bundleDir)).stdio;
  });
  afterAll(() => removeDir(bundleDir));
  beforeEach(async () => {
    workspace = await makeTempDir('mcp-workspace-');
  });
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
    await http?.close();
    http = undefined;
    await removeDir(workspace);
  });
  const agent = useTestAgentServer({ tempPrefix: 'mcp-http-' });

  const stdio = (args: string[] = [], extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [stdioServer, ...args], ...extra });

  function agentWith(extra: Record<string, unknown>) {
    return { kind: 'Agent', llm: { model: 'scripted', base_url: llm?.baseUrl ?? 'http://127.0.0.1:9', api_key: 'sk-test' }, tools: [], ...extra };
  }

  async function run(mcpServers: Record<string, unknown>, script: Parameters<typeof startScriptedLlm>[0], extra: Record<string, unknown> = {}) {
    llm = await startScriptedLlm([...script, toolCalls([{ name: 'finish', arguments: { message: 'done' } }])]);
    const created = await agent.server.createConversation(
      startRequest({
        agent: agentWith({ mcp_config: { mcpServers }, ...extra }),
        workspace: { working_dir: workspace },
        initial_message: { ...textMessage('Go'), run: true },
      }),
    );
    await vi.waitFor(
      async () => expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema)).body.execution_status).toBe('finished'),
      { timeout: 30_000, interval: 25 },
    );
    const events = (await agent.server.callJson('GET', `/api/conversations/${created.id}/events/search?limit=100`, {}, pageSchema(EventSchema))).body.items;
    return { id: created.id, events };
  }

  const offered = (request = 0) => (llm?.requests[request]?.body.tools ?? []).map((tool) => tool.function.name);
  const observationsOf = (events: Event[]) => events.flatMap((e) => (e.kind === 'ObservationEvent' ? [e.observation] : []));
  const textOf = (content: { type: string; text?: string }[]) => content.flatMap((c) => (c.text === undefined ? [] : [c.text])).join('\n');
  const errorsOf = (events: Event[]) => events.flatMap((e) => (e.kind === 'ConversationErrorEvent' ? [e] : []));

  it('offers a stdio server’s tools, calls them as MCPToolActions and records MCPToolObservations', async () => {
    const { events } = await run({ local: stdio([], { env: { MCP_TEST_VALUE: 'from the config' } }) }, [
      toolCalls([{ name: 'add', arguments: { a: 2, b: 3, summary: 'Add two numbers' } }]),
      toolCalls([{ name: 'add', arguments: { a: 'two' } }]),
      toolCalls([{ name: 'picture', arguments: {} }]),
      toolCalls([{ name: 'refuse', arguments: {} }]),
      toolCalls([{ name: 'whoami', arguments: {} }]),
    ]);
    expect(offered()).toEqual(['echo', 'add', 'slow', 'picture', 'refuse', 'whoami', 'unlock', 'exit', 'finish', 'think']);
    // The model is offered the server's own schema, plus OpenHands' summary (and security_risk unless read-only).
    const add = llm?.requests[0]?.body.tools?.find((tool) => tool.function.name === 'add')?.function.parameters as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(add.properties)).toEqual(['a', 'b', 'summary']);
    expect(add.required).toEqual(['a', 'b']);

    const prompt = events.find((e) => e.kind === 'SystemPromptEvent');
    const definition = prompt?.kind === 'SystemPromptEvent' ? prompt.tools.find((tool) => tool.title === 'add') : undefined;
    expect(definition).toMatchObject({
      kind: 'MCPToolDefinition',
      action_type: 'MCPToolAction',
      observation_type: 'MCPToolObservation',
      description: 'Adds two numbers',
      annotations: { readOnlyHint: true },
      mcp_tool: { name: 'add', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', required: ['a', 'b'] } },
    });

    const actions = events.flatMap((e) => (e.kind === 'ActionEvent' ? [e] : []));
    expect(actions[0]).toMatchObject({ tool_name: 'add', action: { kind: 'MCPToolAction', data: { a: 2, b: 3 } }, summary: 'Add two numbers' });
    // Arguments the schema refuses are the model's mistake, answered at once without calling the server.
    expect(actions[1]?.action).toBeNull();
    const agentErrors = events.flatMap((e) => (e.kind === 'AgentErrorEvent' ? [e.error] : []));
    expect(agentErrors).toEqual([expect.stringContaining("Validation error for MCP tool 'add' args")]);

    const [sum, picture, refused, whoami] = observationsOf(events);
    expect(sum).toMatchObject({ kind: 'MCPToolObservation', tool_name: 'add', is_error: false });
    expect(textOf(sum?.content ?? [])).toBe("[Tool 'add' executed.]\n5");
    expect(picture?.content).toEqual([
      { type: 'text', text: "[Tool 'picture' executed.]", cache_prompt: false },
      { type: 'text', text: 'a pixel:', cache_prompt: false },
      { type: 'image', image_urls: [`data:image/png;base64,${PIXEL_PNG_BASE64}`], cache_prompt: false },
    ]);
    // The picture reaches the model as an image part (Chat Completions carries it in a user message after the tool results).
    const parts = (llm?.requests[3]?.body.messages ?? []).flatMap((m) => (typeof m.content === 'string' || m.content === null ? [] : m.content));
    expect(parts).toContainEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG_BASE64}` } });
    expect(refused).toMatchObject({ kind: 'MCPToolObservation', is_error: true, content: [{ text: "[Tool 'refuse' executed.]\nno, never" }] });
    const who = JSON.parse(textOf(whoami?.content ?? []).split('\n')[1] ?? '{}') as { uid: number; cwd: string; value: string; pid: number };
    expect(who).toEqual({ uid: process.getuid?.(), cwd: workspace, value: 'from the config', pid: expect.any(Number) });
    expect(errorsOf(events)).toEqual([]);
  });

  it('offers the tools a server adds after tools/list_changed from the next step on', async () => {
    const { events } = await run({ local: stdio() }, [toolCalls([{ name: 'unlock', arguments: {} }]), toolCalls([{ name: 'secret', arguments: {} }])]);
    expect(offered(0)).not.toContain('secret');
    expect(offered(1)).toEqual(['echo', 'add', 'slow', 'picture', 'refuse', 'whoami', 'unlock', 'exit', 'secret', 'finish', 'think']);
    expect(observationsOf(events).map((o) => textOf(o.content))).toEqual(["[Tool 'unlock' executed.]\nunlocked", "[Tool 'secret' executed.]\nthe secret is 42", 'done']);
  });

  it('times a call out after the server’s timeout, and the server goes on answering', async () => {
    const { events } = await run({ local: stdio([], { timeout: 2 }) }, [
      toolCalls([{ name: 'slow', arguments: { ms: 10_000 } }]),
      toolCalls([{ name: 'echo', arguments: { text: 'still here' } }]),
    ]);
    const [slow, echo] = observationsOf(events);
    expect(slow).toMatchObject({ kind: 'MCPToolObservation', tool_name: 'slow', is_error: true });
    expect(textOf(slow?.content ?? [])).toContain("MCP tool 'slow' timed out after 2 seconds");
    expect(textOf(echo?.content ?? [])).toBe("[Tool 'echo' executed.]\nstill here");
  });

  it('starts a server again when it exited between two calls', async () => {
    const { events } = await run({ local: stdio() }, [
      toolCalls([{ name: 'exit', arguments: {} }]),
      // The server exits 10 ms after its answer; the model thinks longer than that.
      { delayMs: 500, then: toolCalls([{ name: 'echo', arguments: { text: 'back again' } }]) },
    ]);
    const [exit, echo] = observationsOf(events);
    expect(textOf(exit?.content ?? [])).toBe("[Tool 'exit' executed.]\nbye");
    expect(echo).toMatchObject({ is_error: false });
    expect(textOf(echo?.content ?? [])).toBe("[Tool 'echo' executed.]\nback again");
  });

  it('reports servers that fail to start in the conversation and goes on with the others', async () => {
    const { events } = await run(
      {
        good: stdio(),
        broken: stdio(['--fail']),
        silent: stdio(['--silent'], { timeout: 1 }),
        missing: { command: '/nonexistent/mcp-server' },
      },
      [toolCalls([{ name: 'good_echo', arguments: { text: 'hi' } }])],
      { tools: [{ name: 'GlobTool' }] },
    );
    // With several servers, each tool is named after its server, as OpenHands (fastmcp) names them.
    expect(offered()).toEqual(['glob', ...['echo', 'add', 'slow', 'picture', 'refuse', 'whoami', 'unlock', 'exit'].map((name) => `good_${name}`), 'finish', 'think']);
    expect(textOf(observationsOf(events)[0]?.content ?? [])).toBe("[Tool 'good_echo' executed.]\nhi");
    const errors = errorsOf(events);
    expect(errors.map((e) => [e.code, e.source])).toEqual([
      ['MCPError', 'environment'],
      ['MCPTimeoutError', 'environment'],
      ['MCPError', 'environment'],
    ]);
    expect(errors[0]?.detail).toMatch(/^MCP server broken .* failed to start: .*\n.*missing API token: set MCP_TOKEN/s);
    expect(errors[1]?.detail).toContain('MCP server silent');
    expect(errors[1]?.detail).toContain('did not answer and list its tools within 1 s');
    expect(errors[2]?.detail).toContain('MCP server missing');
    expect(errors[2]?.detail).toContain('ENOENT');
  });

  it('speaks Streamable HTTP and SSE, with the configured headers and auth', async () => {
    http = await startHttpMcpServer();
    const { events } = await run(
      {
        web: { url: http.url, headers: { 'X-Team': 'blue' }, auth: 'token-1' },
        events: { url: http.sseUrl, auth: { strategy: 'api_key', value: 'key-2', header_name: 'X-Api-Key' } },
      },
      [toolCalls([{ name: 'web_echo', arguments: { text: 'over http' } }]), toolCalls([{ name: 'events_add', arguments: { a: 40, b: 2 } }])],
      { filter_tools_regex: '.*(echo|add)$' },
    );
    expect(offered()).toEqual(['web_echo', 'web_add', 'events_echo', 'events_add', 'finish', 'think']);
    expect(observationsOf(events).map((o) => textOf(o.content))).toEqual(["[Tool 'web_echo' executed.]\nover http", "[Tool 'events_add' executed.]\n42", 'done']);
    expect(http.requestHeaders.some((h) => h['x-team'] === 'blue' && h.authorization === 'Bearer token-1')).toBe(true);
    expect(http.requestHeaders.some((h) => h['x-api-key'] === 'key-2')).toBe(true);
    expect(errorsOf(events)).toEqual([]);
  });

  it('ends its servers with the conversation, and what a stdio server started', async () => {
    http = await startHttpMcpServer();
    // The shell leaves a background process behind in the server's process group, as `npx` leaves a node.
    const leftover = join(workspace, 'leftover.pid');
    const local = { command: 'sh', args: ['-c', `sleep 300 & echo $! > ${leftover}; exec "${process.execPath}" "${stdioServer}"`] };
    const { id, events } = await run({ local, web: { url: http.url }, events: { url: http.sseUrl } }, [toolCalls([{ name: 'local_whoami', arguments: {} }])]);
    const pid = Number(/"pid":(\d+)/.exec(textOf(observationsOf(events)[0]?.content ?? []))?.[1]);
    const sleeper = Number((await readFile(leftover, 'utf8')).trim());
    expect(pid).toBeGreaterThan(0);
    expect(isRunning(pid) && isRunning(sleeper)).toBe(true);
    expect(http.openSessions()).toBe(2);
    expect((await agent.server.call('DELETE', `/api/conversations/${id}`)).status).toBe(200);
    await vi.waitFor(() => expect([isRunning(pid), isRunning(sleeper)]).toEqual([false, false]), { timeout: 10_000, interval: 50 });
    await vi.waitFor(() => expect(http?.openSessions()).toBe(0), { timeout: 10_000, interval: 50 });
  });

  it('refuses an mcp_config it cannot use with 422 before creating anything', async () => {
    const answer = await agent.server.callJson(
      'POST',
      '/api/conversations',
      {
        json: startRequest({
          agent: agentWith({
            mcp_config: {
              mcpServers: {
                both: { command: 'x', url: 'http://127.0.0.1:1/mcp' },
                oauth: { url: 'http://127.0.0.1:1/mcp', auth: { strategy: 'oauth2' } },
                odd: { command: 'x', colour: 'red' },
                mismatch: { url: 'http://127.0.0.1:1/mcp', transport: 'stdio' },
              },
            },
          }),
          workspace: { working_dir: workspace },
        }),
      },
      ValidationErrorSchema,
    );
    expect(answer.status).toBe(422);
    expect(answer.body.detail.map((d) => d.loc)).toEqual([
      ['body', 'agent', 'mcp_config', 'mcpServers', 'both'],
      ['body', 'agent', 'mcp_config', 'mcpServers', 'oauth', 'auth', 'strategy'],
      ['body', 'agent', 'mcp_config', 'mcpServers', 'odd', 'colour'],
      ['body', 'agent', 'mcp_config', 'mcpServers', 'mismatch', 'transport'],
    ]);
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
