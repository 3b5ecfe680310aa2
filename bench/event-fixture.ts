/**
 * The benchmarks' events: a seeded mix like a real conversation's, and NDJSON logs of them built
 * once per size. With BENCH_FIXTURE_DIR set, built logs are kept there and reused by later runs
 * (building 1M events takes a while); otherwise they live in a temporary directory of the run.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredEvent } from '../src/agent-server/store/index.js';
import { timestampMillis } from '../src/events/timestamp.js';
import { seededRandom } from '../test/helpers/seeded-random.js';

export const START_MS = Date.UTC(2025, 0, 1);
export const RARE_WORD = 'kubernetes';

/** Where built logs go, and how to clean up after the run. */
export async function fixtureDir(name: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const kept = process.env.BENCH_FIXTURE_DIR;
  if (kept) {
    await mkdir(kept, { recursive: true });
    return { dir: kept, cleanup: async () => {} };
  }
  const dir = await mkdtemp(join(tmpdir(), `bench-${name}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

const WORDS = (
  'the a to of and in is it for on with file test build error function run fix update add remove ' +
  'check config server client request response value type module import export return async await ' +
  'string number array object path directory command output exit code install package version'
).split(' ');

/** MessageEvent text as the agent-server extracts it: the text parts of the message and extended content. */
export function searchableText(event: StoredEvent): string | null {
  if (event.kind !== 'MessageEvent') return null;
  const parts = [...((event.llm_message as { content: { text?: string }[] }).content ?? []), ...((event.extended_content as { text?: string }[]) ?? [])];
  return parts.map((part) => part.text ?? '').join('\n');
}

export function eventFactory(seed: number) {
  const random = seededRandom(seed);
  let clock = START_MS;
  let messages = 0;
  const words = (count: number) => Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const envelope = (kind: string, source: string) => {
    clock += Math.floor(random() * 3000);
    return { id: randomUUID(), kind, source, timestamp: new Date(clock).toISOString() };
  };
  return (): StoredEvent => {
    const roll = random();
    if (roll < 0.15) {
      const fromUser = roll < 0.05;
      const rare = ++messages % 5000 === 0 ? ` ${RARE_WORD}` : '';
      return {
        ...envelope('MessageEvent', fromUser ? 'user' : 'agent'),
        llm_message: { role: fromUser ? 'user' : 'assistant', content: [{ type: 'text', text: words(10 + Math.floor(random() * 40)) + rare, cache_prompt: false }] },
        llm_response_id: fromUser ? null : randomUUID(),
        activated_skills: [],
        extended_content: [],
        sender: null,
        critic_result: null,
      };
    }
    if (roll < 0.5) {
      const command = `npm ${words(2)}`;
      const callId = `call_${randomUUID()}`;
      return {
        ...envelope('ActionEvent', 'agent'),
        thought: [{ type: 'text', text: words(15), cache_prompt: false }],
        reasoning_content: null,
        thinking_blocks: [],
        action: { kind: 'TerminalAction', command, is_input: false, timeout: null, reset: false },
        tool_name: 'terminal',
        tool_call_id: callId,
        tool_call: { id: callId, name: 'terminal', arguments: JSON.stringify({ command }), origin: 'completion' },
        llm_response_id: randomUUID(),
        security_risk: 'LOW',
        summary: words(8),
      };
    }
    if (roll < 0.85) {
      return {
        ...envelope('ObservationEvent', 'environment'),
        tool_name: 'terminal',
        tool_call_id: `call_${randomUUID()}`,
        observation: {
          kind: 'TerminalObservation',
          command: `npm ${words(2)}`,
          content: [{ type: 'text', text: words(30 + Math.floor(random() * 60)), cache_prompt: false }],
          exit_code: 0,
          is_error: false,
          timeout: false,
          metadata: { exit_code: 0, pid: -1, working_dir: '/workspace/project', py_interpreter_path: null },
        },
        action_id: randomUUID(),
      };
    }
    return { ...envelope('ConversationStateUpdateEvent', 'environment'), key: 'execution_status', value: random() < 0.5 ? 'running' : 'idle' };
  };
}

export interface BuiltLog {
  file: string;
  bytes: number;
  /** Every 1000th id, for deep page ids. */
  sampleIds: string[];
  lastMs: number;
}

/** Writes `count` events as NDJSON directly (setup, not measured). */
export async function buildLogFile(dir: string, count: number): Promise<BuiltLog> {
  const file = join(dir, `events-${count}.ndjson`);
  const summary = `${file}.json`;
  try {
    return JSON.parse(await readFile(summary, 'utf8')) as BuiltLog;
  } catch {
    // Not built yet (or half built by an interrupted run): build it.
  }
  const next = eventFactory(count);
  const handle = await open(file, 'w');
  const sampleIds: string[] = [];
  let bytes = 0;
  let lastMs = START_MS;
  try {
    for (let written = 0; written < count; ) {
      const lines: string[] = [];
      for (const stop = Math.min(count, written + 10_000); written < stop; written++) {
        const event = next();
        if (written % 1000 === 0) sampleIds.push(event.id);
        lastMs = timestampMillis(event.timestamp);
        lines.push(JSON.stringify(event));
      }
      const chunk = Buffer.from(`${lines.join('\n')}\n`);
      await handle.write(chunk);
      bytes += chunk.length;
    }
  } finally {
    await handle.close();
  }
  const log: BuiltLog = { file, bytes, sampleIds, lastMs };
  await writeFile(summary, JSON.stringify(log));
  return log;
}

