/**
 * The browser tools on a page served on 127.0.0.1: browser_navigate followed by
 * browser_get_content (the agent's usual way to read a page), and browser_get_state with a
 * screenshot, each through the tools as the agent loop calls them; beside them a plain fetch of the
 * same page, and what the first call of a conversation costs (Chromium starting).
 * Run: `npm run bench -- tools` (needs Chromium: Debian's chromium, or CHROMIUM_PATH).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAgentFs } from '../src/agent-server/agent-fs/index.js';
import { createBrowserTools } from '../src/agent-server/agent/tools/browser/browser-tools.js';
import { findChromium } from '../src/agent-server/agent/tools/browser/chromium.js';
import { closeTools, type AnyTool } from '../src/agent-server/agent/tools/index.js';
import { formatMs, measure, printTable } from './measure.js';

const RUNS = 60;
const WARMUP = 5;
const STARTS = 3;

const PAGE = `<!doctype html><title>Bench page</title><h1>Release notes</h1>
${Array.from({ length: 40 }, (_, i) => `<h2>Change ${i}</h2><p>Paragraph ${i} with <a href="/item/${i}">a link</a> and <b>bold</b> text.</p><ul><li>one</li><li>two</li></ul>`).join('\n')}
<input placeholder="Search"><button>Go</button>`;

export async function runBrowser(): Promise<void> {
  let chromium: string;
  try {
    chromium = findChromium();
  } catch (error) {
    console.log(`Browser: skipped (${(error as Error).message.split('.')[0]})`);
    return;
  }
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'bench-browser-'));
  const makeTools = () => createBrowserTools({ workspaceDir: workspace, files: createAgentFs({}), executablePath: chromium });
  try {
    const fetchFloor = await measure(RUNS, async () => {
      const text = await (await fetch(url)).text();
      if (!text.includes('Change 39')) throw new Error('unexpected page');
    });
    const starts = await measure(STARTS, async () => {
      const tools = makeTools();
      try {
        await call(tools, 'browser_navigate', { url });
      } finally {
        await closeTools(tools);
      }
    });
    const tools = makeTools();
    try {
      await call(tools, 'browser_navigate', { url });
      const read = async () => {
        await call(tools, 'browser_navigate', { url });
        const content = await call(tools, 'browser_get_content', {});
        if (!content.includes('## Change 39')) throw new Error(`unexpected content ${content.slice(0, 200)}`);
      };
      for (let i = 0; i < WARMUP; i++) await read();
      const navigateAndRead = await measure(RUNS, read);
      const state = await measure(RUNS, () => call(tools, 'browser_get_state', { include_screenshot: true }));
      console.log(`\nBrowser tools on a local page (${PAGE.length} bytes of HTML), ${RUNS} runs each after ${WARMUP} warm-up runs; Chromium ${chromium}`);
      printTable(
        ['what', 'p50', 'p95'],
        [
          ['fetch of the page (floor)', formatMs(fetchFloor.p50), formatMs(fetchFloor.p95)],
          ['browser_navigate + browser_get_content', formatMs(navigateAndRead.p50), formatMs(navigateAndRead.p95)],
          ['browser_get_state with a screenshot', formatMs(state.p50), formatMs(state.p95)],
          [`first call of a conversation (Chromium starts), ${STARTS} runs`, formatMs(starts.p50), formatMs(starts.p95)],
        ],
      );
    } finally {
      await closeTools(tools);
    }
  } finally {
    server.close();
    await rm(workspace, { recursive: true, force: true });
  }
}

/** Calls one tool and answers its text; an error observation throws. */
async function call(tools: AnyTool[], name: string, args: Record<string, unknown>): Promise<string> {
  const tool = tools.find((candidate) => candidate.name === name);
  const parsed = tool?.parseArguments(args);
  if (!tool || !parsed?.ok) throw new Error(`cannot call ${name}`);
  const observation = await tool.execute(parsed.action);
  const text = observation.content.map((item) => (item.type === 'text' ? item.text : '')).join('');
  if (observation.is_error) throw new Error(`${name} failed: ${text}`);
  return text;
}
