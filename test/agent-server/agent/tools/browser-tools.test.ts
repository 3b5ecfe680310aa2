import { execFileSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { findChromium } from '../../../../src/agent-server/agent/tools/browser/chromium.js';
import type { Event, Observation } from '../../../../src/events/index.js';
import { toolCalls, type ReceivedRequest, type ScriptedToolCall } from '../../../helpers/scripted-llm.js';
import { useLlmConversations } from '../../llm/harness.js';

/**
 * The BrowserToolSet through the agent-server's HTTP API: a scripted LLM drives a real Chromium
 * (found on PATH, or CHROMIUM_PATH) against pages this test serves on 127.0.0.1.
 */

const PAGE = `<!doctype html><title>Greeter</title>
<h1>Greeter</h1>
<p id="greeting">Nobody greeted yet.</p>
<input id="name" placeholder="Your name">
<button onclick="document.getElementById('greeting').textContent = 'Hello, ' + document.getElementById('name').value + '!'">Greet</button>
<a href="/second" target="_blank">Second page</a>`;

const SECOND = '<!doctype html><title>Second</title><p>The second page.</p>';

let chromium: string | undefined;
try {
  chromium = findChromium();
} catch {
  chromium = undefined;
}
const inCi = process.env.CI === 'true' || process.env.CI === '1';
// A developer without Chromium is told and skipped; CI must never pass without running this.
if (chromium === undefined && !inCi) console.warn('\n*** SKIPPED browser-tools.test.ts: no Chromium (apt-get install chromium, or set CHROMIUM_PATH) ***\n');

describe.skipIf(chromium === undefined && !inCi)('BrowserToolSet over HTTP', { timeout: 120_000 }, () => {
  let site: Server;
  let origin: string;

  beforeAll(async () => {
    site = createServer((request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(request.url === '/second' ? SECOND : PAGE);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

  const conversations = useLlmConversations('browser-tools');
  const BROWSER = { tools: [{ name: 'BrowserToolSet' }] };
  // Starting Chromium takes a few seconds, several times that on a loaded machine: a run of
  // browser calls gets longer than the harness's default to finish.
  const RUN_TIMEOUT_MS = 90_000;

  function run(calls: ScriptedToolCall[], llm: Record<string, unknown> = {}) {
    return conversations.run([...calls.map((call) => toolCalls([call])), toolCalls([{ name: 'finish', arguments: { message: 'done' } }])], { agent: BROWSER, llm, timeoutMs: RUN_TIMEOUT_MS });
  }

  const observations = (events: Event[]): Observation[] =>
    events.flatMap((event) => (event.kind === 'ObservationEvent' && event.observation.kind !== 'FinishObservation' ? [event.observation] : []));
  const text = (observation: Observation | undefined) => (observation?.content ?? []).map((item) => (item.type === 'text' ? item.text : '')).join('');

  it('is offered only when chosen: the fourteen browser_* tools under their OpenHands names', async () => {
    const listed = await conversations.agent.server.callJson('GET', '/api/tools/', {}, z.array(z.string()));
    expect(listed.body).toContain('browser_tool_set');
    const { requests } = await run([]);
    expect(requests[0]!.body.tools!.map((tool) => tool.function.name)).toEqual([
      'browser_navigate',
      'browser_click',
      'browser_get_state',
      'browser_get_content',
      'browser_type',
      'browser_scroll',
      'browser_go_back',
      'browser_list_tabs',
      'browser_switch_tab',
      'browser_close_tab',
      'browser_get_storage',
      'browser_set_storage',
      'browser_start_recording',
      'browser_stop_recording',
      'finish',
      'think',
    ]);
    const click = requests[0]!.body.tools!.find((tool) => tool.function.name === 'browser_click')!;
    expect(click.function.parameters).toMatchObject({ required: ['index'], properties: { index: { type: 'integer', minimum: 0 }, new_tab: { type: 'boolean', default: false } } });
  });

  it('navigates, reads the numbered elements, types, clicks a button that changes the page and reads the change', async () => {
    const { info, events } = await run([
      { name: 'browser_navigate', arguments: { url: `${origin}/` } },
      { name: 'browser_get_state', arguments: {} },
      { name: 'browser_type', arguments: { index: 0, text: 'Ada' } },
      { name: 'browser_click', arguments: { index: 1 } },
      { name: 'browser_get_content', arguments: {} },
      { name: 'browser_click', arguments: { index: 7 } },
    ]);
    expect(info.execution_status).toBe('finished');
    const [navigated, state, typed, clicked, content, missing] = observations(events);
    expect(observations(events).map((o) => [o.kind, o.is_error])).toEqual([
      ['BrowserObservation', false],
      ['BrowserObservation', false],
      ['BrowserObservation', false],
      ['BrowserObservation', false],
      ['BrowserObservation', false],
      ['BrowserObservation', true],
    ]);
    expect(text(navigated)).toContain(`Navigated to ${origin}/`);
    const snapshot = JSON.parse(text(state)) as { url: string; title: string; interactive_elements: Record<string, unknown>[] };
    expect(snapshot).toMatchObject({ url: `${origin}/`, title: 'Greeter' });
    expect(snapshot.interactive_elements).toEqual([
      expect.objectContaining({ index: 0, tag: 'input', placeholder: 'Your name' }),
      expect.objectContaining({ index: 1, tag: 'button', text: 'Greet' }),
      expect.objectContaining({ index: 2, tag: 'a', text: 'Second page', href: `${origin}/second` }),
    ]);
    expect(text(typed)).toContain('Typed "Ada" into element 0');
    expect(text(clicked)).toContain('Clicked element 1');
    expect(text(content)).toContain('# Greeter');
    expect(text(content)).toContain('Hello, Ada!');
    expect(text(content)).not.toContain('Nobody greeted yet.');
    expect(text(missing)).toContain('No element has index 7');
  });

  it.each<[string, Record<string, unknown>, (request: ReceivedRequest) => unknown[]]>([
    ['Chat Completions (in a user message after the tool result)', { model: 'openai/gpt-4o' }, (r) => r.body.messages.filter((m) => m.role === 'user').flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((p) => p.type === 'image_url').map((p) => (p as { image_url: { url: string } }).image_url.url)],
    ['Anthropic Messages (in the tool_result)', { model: 'anthropic/claude-sonnet-4-5' }, (r) => blocksOf(r.body.messages).filter((b) => b.type === 'tool_result').flatMap((b) => b.content as Record<string, unknown>[]).filter((b) => b.type === 'image').map((b) => `data:${(b.source as Record<string, string>).media_type};base64,${(b.source as Record<string, string>).data}`)],
    ['Responses (in the function_call_output)', { model: 'openai/gpt-5-codex' }, (r) => (r.body.input as Record<string, unknown>[]).filter((i) => i.type === 'function_call_output' && Array.isArray(i.output)).flatMap((i) => i.output as Record<string, unknown>[]).filter((p) => p.type === 'input_image').map((p) => p.image_url)],
  ])('sends a screenshot to the LLM as an image: %s', async (_name, llm, imagesOf) => {
    const { events, requests } = await run(
      [
        { name: 'browser_navigate', arguments: { url: `${origin}/` } },
        { name: 'browser_get_state', arguments: { include_screenshot: true } },
      ],
      llm,
    );
    const shot = observations(events)[1];
    expect(shot).toMatchObject({ kind: 'BrowserObservation', is_error: false });
    const screenshot = shot?.kind === 'BrowserObservation' ? shot.screenshot_data : null;
    expect(Buffer.from(screenshot ?? '', 'base64').subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(imagesOf(requests[1]!)).toEqual([]);
    expect(imagesOf(requests[2]!)).toEqual([`data:image/png;base64,${screenshot}`]);
  });

  it('opens, lists, switches and closes tabs, goes back, sets and reads storage, and records to a file', async () => {
    let tabs: { tab_id: string; url: string; current: boolean }[] = [];
    const { events } = await conversations.run(
      [
        toolCalls([{ name: 'browser_start_recording', arguments: {} }]),
        toolCalls([{ name: 'browser_navigate', arguments: { url: `${origin}/` } }]),
        toolCalls([{ name: 'browser_get_state', arguments: {} }]),
        toolCalls([{ name: 'browser_click', arguments: { index: 2 } }]),
        toolCalls([{ name: 'browser_list_tabs', arguments: {} }]),
        (request) => {
          tabs = JSON.parse(lastToolResult(request)) as typeof tabs;
          return toolCalls([{ name: 'browser_switch_tab', arguments: { tab_id: tabs[0]!.tab_id } }]);
        },
        () => toolCalls([{ name: 'browser_close_tab', arguments: { tab_id: tabs[1]!.tab_id } }]),
        toolCalls([{ name: 'browser_list_tabs', arguments: {} }]),
        toolCalls([{ name: 'browser_set_storage', arguments: { storage_state: { cookies: [{ name: 'session', value: 's1', url: origin }], origins: [{ origin, localStorage: [{ name: 'theme', value: 'dark' }] }] } } }]),
        toolCalls([{ name: 'browser_get_storage', arguments: {} }]),
        toolCalls([{ name: 'browser_navigate', arguments: { url: `${origin}/second` } }]),
        toolCalls([{ name: 'browser_go_back', arguments: {} }]),
        toolCalls([{ name: 'browser_scroll', arguments: { direction: 'down' } }]),
        toolCalls([{ name: 'browser_stop_recording', arguments: {} }]),
        toolCalls([{ name: 'browser_close_tab', arguments: { tab_id: 'ZZZZ' } }]),
        toolCalls([{ name: 'finish', arguments: { message: 'done' } }]),
      ],
      { agent: BROWSER, timeoutMs: RUN_TIMEOUT_MS },
    );
    const results = observations(events);
    expect(results.filter((o) => o.is_error).map(text)).toEqual([expect.stringContaining('No tab has the id "ZZZZ"')]);
    const [, , , clicked, , switched, closed, remaining, , storage, , back, scrolled, stopped] = results;
    expect(text(clicked)).toMatch(/opened tab [0-9A-F]{4}, now the current tab\. Page: .*\/second \(Second\)/);
    expect(tabs.map((tab) => [tab.url, tab.current])).toEqual([
      [`${origin}/`, false],
      [`${origin}/second`, true],
    ]);
    expect(text(switched)).toContain(`Switched to tab ${tabs[0]!.tab_id}. Page: ${origin}/ (Greeter)`);
    expect(text(closed)).toContain(`Closed tab ${tabs[1]!.tab_id}. The current tab is ${tabs[0]!.tab_id}`);
    expect(JSON.parse(text(remaining))).toEqual([{ tab_id: tabs[0]!.tab_id, url: `${origin}/`, title: 'Greeter', current: true }]);
    const stored = JSON.parse(text(storage)) as { cookies: { name: string; value: string }[]; origins: unknown[] };
    expect(stored.cookies).toEqual([expect.objectContaining({ name: 'session', value: 's1' })]);
    expect(stored.origins).toEqual([{ origin, localStorage: [{ name: 'theme', value: 'dark' }] }]);
    expect(text(back)).toContain(`Went back. Page: ${origin}/ (Greeter)`);
    expect(text(scrolled)).toContain('Scrolled down');
    const saved = /saved to (\S+trace\.zip) \((\d+) bytes\)/.exec(text(stopped));
    expect(saved?.[1]).toContain(`${conversations.workspace()}/.agent_tmp/browser_observations/recording-`);
    expect((await stat(saved![1]!)).size).toBe(Number(saved?.[2]));
    expect(Number(saved?.[2])).toBeGreaterThan(1000);
  });

  it('keeps the browser of the tools filter_tools_regex leaves, though the dropped ones are closed', async () => {
    const { events, requests } = await conversations.run(
      [
        toolCalls([{ name: 'browser_navigate', arguments: { url: `${origin}/` } }]),
        toolCalls([{ name: 'browser_get_content', arguments: {} }]),
        toolCalls([{ name: 'finish', arguments: { message: 'done' } }]),
      ],
      { agent: { ...BROWSER, filter_tools_regex: 'browser_(navigate|get_content)$' }, timeoutMs: RUN_TIMEOUT_MS },
    );
    expect(requests[0]!.body.tools!.map((tool) => tool.function.name)).toEqual(['browser_navigate', 'browser_get_content', 'finish', 'think']);
    expect(observations(events).map((o) => [o.is_error, text(o).split('\n')[0]])).toEqual([
      [false, `Navigated to ${origin}/. Page: ${origin}/ (Greeter)`],
      [false, '# Greeter'],
    ]);
  });

  it('closes the browser when the conversation is deleted', async () => {
    const { id } = await run([{ name: 'browser_navigate', arguments: { url: `${origin}/` } }]);
    expect(ourChromiums().length).toBeGreaterThan(0);
    await conversations.agent.server.callJson('DELETE', `/api/conversations/${id}`, {}, z.object({ success: z.boolean() }));
    await expect.poll(ourChromiums, { timeout: 10_000 }).toEqual([]);
  });

  describe('without a browser', () => {
    const saved = process.env.CHROMIUM_PATH;
    afterEach(() => {
      if (saved === undefined) delete process.env.CHROMIUM_PATH;
      else process.env.CHROMIUM_PATH = saved;
    });

    it('answers each call with a clear error observation, and the agent carries on', async () => {
      process.env.CHROMIUM_PATH = '/nonexistent/chromium';
      const { info, events } = await run([
        { name: 'browser_navigate', arguments: { url: `${origin}/` } },
        { name: 'browser_get_state', arguments: {} },
      ]);
      expect(info.execution_status).toBe('finished');
      expect(observations(events).map((o) => [o.kind, o.is_error, text(o)])).toEqual([
        ['BrowserObservation', true, expect.stringContaining('CHROMIUM_PATH is set to /nonexistent/chromium, which is not an executable file')],
        ['BrowserObservation', true, expect.stringContaining('CHROMIUM_PATH is set to /nonexistent/chromium')],
      ]);
    });
  });
});

/** The text of the last tool result a Chat Completions request carries. */
function lastToolResult(request: ReceivedRequest): string {
  const content = request.body.messages.filter((message) => message.role === 'tool').at(-1)?.content;
  return typeof content === 'string' ? content : (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function blocksOf(messages: unknown[]): Record<string, unknown>[] {
  return (messages as { content: unknown }[]).flatMap((message) => (Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : []));
}

/** The Chromium processes this test process started (each its own group, so found by parent). */
function ourChromiums(): string[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' });
  const children = new Map<number, number[]>();
  const args = new Map<number, string>();
  for (const line of table.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const [pid, ppid] = [Number(match[1]), Number(match[2])];
    args.set(pid, match[3]!);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found: string[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      if (args.get(child)?.includes('--remote-debugging-port=0')) found.push(args.get(child)!);
      walk(child);
    }
  };
  walk(process.pid);
  return found;
}
