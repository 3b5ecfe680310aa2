/**
 * Agent-server restart holding a big conversation: from spawning the bundled program
 * (dist/agent-server.js) to its first search answered, with 1M events in the conversation's log,
 * beside its floor measured in the same run: the same restart with an empty log. Runs alternate,
 * so load from the rest of the machine falls on both alike. Also shown once: the restart with no
 * checkpoint beside the log (a full replay, what every restart paid before checkpoints).
 * Run: `npm run build && npm run bench -- restart` (BENCH_EVENTS=100000 for a smaller log,
 * BENCH_FIXTURE_DIR=/some/dir to build the log once and reuse it).
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ConversationRegistry } from '../src/agent-server/conversations/registry.js';
import { startConversation } from '../src/agent-server/services/conversations/start-conversation.js';
import { StartConversationRequestSchema } from '../src/contracts/agent-server/conversation-requests.js';
import { buildLogFile, fixtureDir } from './event-fixture.js';
import { formatMs, formatRatio, percentile, printTable } from './measure.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const RUNS = 7;
const REPLAY_RUNS = 1;
const CONVERSATION_ID = '0b5e2c3a-1f4d-4c6e-9a7b-2d8f1e3c4b5a';
const PROGRAM = 'dist/agent-server.js';

export async function run(): Promise<void> {
  await stat(PROGRAM).catch(() => {
    throw new Error(`${PROGRAM} is missing: run \`npm run build\` first`);
  });
  const { dir, cleanup } = await fixtureDir('restart');
  try {
    const built = await buildLogFile(dir, EVENTS);
    const empty = await dataDir(join(dir, `restart-empty-${process.pid}`));
    const full = await dataDir(join(dir, `restart-full-${process.pid}`));
    const log = join(full, 'conversations', CONVERSATION_ID, 'events.ndjson');
    await copyFile(built.file, log);
    try {
      const replay: number[] = [];
      for (let i = 0; i < REPLAY_RUNS; i++) {
        await rm(`${log}.checkpoint`, { force: true });
        // Its clean stop writes the checkpoint the runs below start from.
        replay.push(await restartToFirstSearch(full));
      }
      const floor: number[] = [];
      const ours: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        floor.push(await restartToFirstSearch(empty));
        ours.push(await restartToFirstSearch(full));
      }
      console.log(
        `Agent-server restart -> first search answered (limit 100), ${EVENTS.toLocaleString('en-US')} events ` +
          `(${(built.bytes / 1e6).toFixed(0)} MB of NDJSON) vs an empty log, ${RUNS} alternating runs`,
      );
      printTable(
        ['restart', 'p50', 'p95', 'samples', 'floor p50', 'ratio p50', 'goal'],
        [
          row('with checkpoint (ours)', ours, floor, '<= 2x'),
          row('no checkpoint (full replay)', replay, floor, '-'),
          row('empty log (floor)', floor, floor, '-'),
        ],
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
      await rm(full, { recursive: true, force: true });
    }
  } finally {
    await cleanup();
  }
}

/** A data directory holding the bench's conversation, with an empty log. */
async function dataDir(path: string): Promise<string> {
  await mkdir(path, { recursive: true });
  const conversations = await ConversationRegistry.open({ dataDir: path });
  await startConversation(
    { conversations },
    StartConversationRequestSchema.parse({
      conversation_id: CONVERSATION_ID,
      agent: { kind: 'Agent', llm: { model: 'bench', base_url: 'http://127.0.0.1:9/v1' } },
      workspace: { working_dir: '/tmp' },
    }),
  );
  await conversations.close();
  return path;
}

/** Spawns the agent-server on `data`, times spawn -> first search answered, then stops it cleanly. */
async function restartToFirstSearch(data: string): Promise<number> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OH_SESSION_API_KEYS_') && name !== 'SESSION_API_KEY'));
  const started = performance.now();
  const child = spawn(process.execPath, [PROGRAM, '--port', '0', '--data-dir', data], {
    env: { ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const port = await listeningPort(child.stdout);
    const response = await fetch(`http://127.0.0.1:${port}/api/conversations/${CONVERSATION_ID}/events/search?limit=100`);
    const body = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`search answered ${response.status}: ${body.slice(0, 200)}`);
    return elapsed;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

function listeningPort(stdout: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: stdout });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'agent-server listening' && entry.port) resolve(entry.port);
      } catch {
        // Not a log line of ours.
      }
    });
    lines.once('close', () => reject(new Error('agent-server exited before listening')));
  });
}

function row(name: string, values: number[], floor: number[], goal: string): string[] {
  const p50 = percentile(values, 0.5);
  return [name, formatMs(p50), formatMs(percentile(values, 0.95)), String(values.length), formatMs(percentile(floor, 0.5)), formatRatio(p50 / percentile(floor, 0.5)), goal];
}
