import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConversationInfoSchema } from '../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema, type Event, type Observation } from '../../src/events/index.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { type E2eControlPlane, startE2eControlPlane } from './harness.js';
import { buildSuiteImage, SANDBOX_LLM_BASE_URL, startRunningSandbox, waitForLoopbackPort } from './sandbox-agent.js';

const docker = await connectDocker();
const PAGE_PORT = 18081;
const FIXTURES = join(import.meta.dirname, 'fixtures');

/**
 * The BrowserToolSet in real sandboxes under gVisor, through the control plane: in an image with
 * Chromium (`sandbox-base-full:local`, from ../shared/env/more-images.sh: chromium-headless-shell)
 * the agent opens a page served inside the sandbox, types, clicks a button by index, reads the
 * changed page, and its screenshot reaches the LLM stand-in (inside the sandbox) as an image part;
 * in the plain base image, without Chromium, the call is a clear error and the agent carries on.
 */
describe.runIf(docker).each([
  { base: 'sandbox-base-full:local', chromium: true },
  { base: TEST_BASE_IMAGE, chromium: false },
])('the browser tools in a sandbox of $base under runsc', ({ base, chromium }) => {
  let cp: E2eControlPlane;
  const engine = docker as Docker;

  beforeAll(async () => {
    cp = await startE2eControlPlane({
      AGENT_SERVER_IMAGE: await buildSuiteImage('browser', base),
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

  it(chromium ? 'opens a page, types, clicks by index, reads the change, and shows the LLM a screenshot' : 'answers a browser call with a clear error', async () => {
    const { path: agent, bash, upload, startScriptedLlm } = await startRunningSandbox(cp);

    const page = `http://127.0.0.1:${PAGE_PORT}/`;
    const calls = chromium
      ? [
          { name: 'browser_navigate', arguments: { url: page } },
          { name: 'browser_get_state', arguments: {} },
          { name: 'browser_type', arguments: { index: 0, text: 'Grace' } },
          { name: 'browser_click', arguments: { index: 1 } },
          { name: 'browser_get_content', arguments: {} },
          { name: 'browser_get_state', arguments: { include_screenshot: true } },
        ]
      : [{ name: 'browser_navigate', arguments: { url: page } }];
    const script = [...calls.map((call) => ({ tool_calls: [call] })), { tool_calls: [{ name: 'finish', arguments: { message: 'Done' } }] }];
    await startScriptedLlm(script, { keepRequests: true });
    await upload('/tmp/page/page.mjs', await readFile(join(FIXTURES, 'greeter-page.mjs'), 'utf8'));
    const launched = await bash(`setsid node /tmp/page/page.mjs ${PAGE_PORT} > /tmp/page/log 2>&1 < /dev/null & (${waitForLoopbackPort(PAGE_PORT)})`);
    expect(launched.exit_code).toBe(0);

    const created = await cp.request('POST', agent('/api/conversations'), {
      agent: {
        kind: 'Agent',
        llm: { model: 'openai/scripted', base_url: SANDBOX_LLM_BASE_URL, api_key: 'sk-none' },
        tools: [{ name: 'BrowserToolSet' }],
      },
      workspace: { working_dir: '/workspace' },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'Greet Grace on the page' }], run: true },
    }, ConversationInfoSchema);
    expect(created.status).toBe(201);
    const id = created.body.id;
    await vi.waitFor(
      async () => expect((await cp.request('GET', agent(`/api/conversations/${id}`), undefined, ConversationInfoSchema)).body.execution_status).toBe('finished'),
      { timeout: 120_000, interval: 250 },
    );
    const events: Event[] = (await cp.request('GET', agent(`/api/conversations/${id}/events/search?limit=100`), undefined, pageSchema(EventSchema))).body.items;
    const observations = events.flatMap((e) => (e.kind === 'ObservationEvent' && e.observation.kind !== 'FinishObservation' ? [e.observation] : []));
    const textOf = (o: Observation | undefined) => (o?.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');

    if (!chromium) {
      expect(observations.map((o) => [o.kind, o.is_error])).toEqual([['BrowserObservation', true]]);
      expect(textOf(observations[0])).toContain('No Chromium browser was found in this sandbox');
      return;
    }
    expect(observations.map((o) => [o.kind, o.is_error, textOf(o).slice(0, 200)])).toEqual(observations.map((o) => ['BrowserObservation', false, textOf(o).slice(0, 200)]));
    const elements = (JSON.parse(textOf(observations[1])) as { interactive_elements: { index: number; tag: string }[] }).interactive_elements;
    expect(elements.map((e) => [e.index, e.tag])).toEqual([
      [0, 'input'],
      [1, 'button'],
    ]);
    expect(textOf(observations[4])).toContain('Hello, Grace!');
    const shot = observations[5];
    const screenshot = shot?.kind === 'BrowserObservation' ? shot.screenshot_data : null;
    expect(screenshot).toMatch(/^iVBORw0KGgo/);
    // Chromium runs as the agent user, and ends when the conversation is deleted (below).
    expect((await bash('ps -eo user:20=,args= | grep -c "^openhands .*remote-debugging-port[=]0" || true')).stdout?.trim()).not.toBe('0');
    // The request after the screenshot carries it as an image, after the tool result (Chat Completions).
    const sent = await bash(
      `node -e "const b = require('/tmp/llm/requests/7.json'); const urls = b.messages.flatMap((m) => Array.isArray(m.content) ? m.content : []).filter((p) => p.type === 'image_url').map((p) => p.image_url.url); console.log(JSON.stringify(urls.map((u) => [u.slice(0, 22), u.length])))"`,
    );
    expect(JSON.parse(sent.stdout ?? '')).toEqual([['data:image/png;base64,', `data:image/png;base64,${screenshot}`.length]]);
    expect((await cp.request('DELETE', agent(`/api/conversations/${id}`))).status).toBe(200);
    await vi.waitFor(async () => expect((await bash('pgrep -fc "remote-debugging-port[=]0" || true')).stdout?.trim()).toBe('0'), { timeout: 20_000, interval: 250 });
  }, 240_000);
});
