/**
 * The agent's terminal: one command's round trip through the terminal tool (typed into a
 * persistent bash in a PTY, its output read back up to its sentinel), in tmux and in script,
 * beside its floor measured in the same run: `bash -c` started for the same command.
 * Goal: at most 1.5x the floor at p50. Then an MCP tool call's overhead (tools-mcp.ts), and the
 * browser tools reading a local page (tools-browser.ts).
 * Run: `npm run bench -- tools` (needs tmux and script; the browser part needs Chromium).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTerminalTool } from '../src/agent-server/agent/tools/index.js';
import type { PtyBackend } from '../src/agent-server/agent/tools/terminal/shell-process.js';
import { formatMs, formatRatio, measure, printTable } from './measure.js';
import { runBrowser } from './tools-browser.js';
import { runMcp } from './tools-mcp.js';

const RUNS = 300;
const WARMUP = 20;
const COMMAND = 'echo "round trip $((6 * 7))"';
const execFileAsync = promisify(execFile);

export async function run(): Promise<void> {
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'bench-tools-'));
  try {
    const floor = await measureFloor(workspace);
    const rows = [['bash -c (floor)', formatMs(floor.p50), formatMs(floor.p95), '1.00x']];
    for (const backend of ['tmux', 'script'] as const) {
      const terminal = await measureTerminal(workspace, backend);
      rows.push([`terminal tool, ${backend}`, formatMs(terminal.p50), formatMs(terminal.p95), formatRatio(terminal.p50 / floor.p50)]);
    }
    console.log(`One command (${COMMAND}), ${RUNS} runs each after ${WARMUP} warm-up runs; ratio of p50s`);
    printTable(['how', 'p50', 'p95', 'vs bash -c'], rows);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
  await runMcp();
  await runBrowser();
}

async function measureFloor(workspace: string) {
  const once = async () => {
    const { stdout } = await execFileAsync('bash', ['-c', COMMAND], { cwd: workspace });
    if (!stdout.includes('round trip 42')) throw new Error(`unexpected output ${stdout}`);
  };
  for (let i = 0; i < WARMUP; i++) await once();
  return measure(RUNS, once);
}

async function measureTerminal(workspace: string, backend: PtyBackend) {
  const tool = createTerminalTool({ workspaceDir: workspace, backend });
  const parsed = tool.parseArguments({ command: COMMAND });
  if (!parsed.ok) throw new Error(parsed.error);
  const once = async () => {
    const observation = await tool.execute(parsed.action);
    const text = observation.content.map((c) => ('text' in c ? c.text : '')).join('');
    if (!text.startsWith('round trip 42\n')) throw new Error(`unexpected output ${text}`);
  };
  try {
    for (let i = 0; i < WARMUP; i++) await once();
    return await measure(RUNS, once);
  } finally {
    await tool.close();
  }
}
