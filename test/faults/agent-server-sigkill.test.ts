/**
 * Fault injection: the agent-server program (the built bundle, as a sandbox runs it) is killed with
 * SIGKILL while clients append messages and import large batches into one conversation, 20 times
 * over the same data directory. After each restart, and at the end:
 * - every event whose append or import was acknowledged (200) is stored: 0 lost;
 * - every import batch is stored whole or not at all: 0 partial;
 * - no event id is stored twice: 0 duplicates.
 * The tallies are printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { startRequest } from '../helpers/agent-server.js';

const ROUNDS = 20;
const APPENDERS = 4;
const IMPORTERS = 2;
/** Large enough that a kill often lands mid-write; small enough that appends are not starved. */
const BATCH_EVENTS = 500;
const BUNDLE = join(import.meta.dirname, '..', '..', 'dist', 'agent-server.js');

let dataDir: string;

beforeAll(async () => {
  await ensureBuilt();
  dataDir = await mkdtemp(join(tmpdir(), 'agent-server-sigkill-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  baseUrl: string;
}

async function startServer(): Promise<Running> {
  const child = spawn(process.execPath, [BUNDLE, '--port', '0', '--data-dir', dataDir], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agent-server did not start:\n${output}`)), 20_000);
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const port = /"port":(\d+).*agent-server listening/.exec(output)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${port}`);
      }
    });
    child.once('exit', (code) => reject(new Error(`agent-server exited with ${code}:\n${output}`)));
  });
  child.stdout!.resume();
  return { child, baseUrl };
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

function pauseEvent(id: string): Record<string, unknown> {
  return { kind: 'PauseEvent', id, timestamp: new Date().toISOString(), source: 'user' };
}

/** Every stored event's id (and, for messages, text), read back through the export route. */
async function storedEvents(baseUrl: string, conversationId: string): Promise<{ ids: string[]; texts: Set<string> }> {
  const response = await fetch(`${baseUrl}/api/conversations/${conversationId}/events/export`);
  expect(response.status).toBe(200);
  const ids: string[] = [];
  const texts = new Set<string>();
  for (const line of (await response.text()).split('\n')) {
    if (line === '') continue;
    const event = JSON.parse(line) as { id: string; kind: string; llm_message?: { content: { text?: string }[] } };
    ids.push(event.id);
    if (event.kind === 'MessageEvent') texts.add(event.llm_message?.content[0]?.text ?? '');
  }
  return { ids, texts };
}

test(`SIGKILL during concurrent appends and imports, ${ROUNDS} rounds: nothing acknowledged lost, no partial batch, no duplicate`, { timeout: 600_000 }, async () => {
  const conversationId = randomUUID();
  const acknowledgedTexts: string[] = [];
  const acknowledgedBatches: string[] = [];
  const attemptedBatches: string[] = [];
  const tally = { rounds: 0, appendsAcknowledged: 0, importsAcknowledged: 0, importsAttempted: 0, lost: 0, partialBatches: 0, droppedBatches: 0, duplicateIds: 0 };

  let server = await startServer();
  const created = await fetch(`${server.baseUrl}/api/conversations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(startRequest({ conversation_id: conversationId, workspace: { working_dir: join(dataDir, 'workspace') } })),
  });
  expect(created.status).toBe(201);

  for (let round = 0; round < ROUNDS; round++) {
    const { baseUrl } = server;
    let killed = false;
    const appender = async (worker: number) => {
      for (let n = 0; !killed; n++) {
        const text = `round ${round} appender ${worker} message ${n}`;
        const response = await fetch(`${baseUrl}/api/conversations/${conversationId}/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ role: 'user', content: [{ type: 'text', text }], run: false }),
        }).catch(() => undefined);
        if (!response) return;
        if (response.status === 200) acknowledgedTexts.push(text);
        await response.body?.cancel();
      }
    };
    const importer = async (worker: number) => {
      for (let n = 0; !killed; n++) {
        const batch = `r${round}-i${worker}-b${n}`;
        attemptedBatches.push(batch);
        const body = Array.from({ length: BATCH_EVENTS }, (_, k) => JSON.stringify(pauseEvent(`${batch}-${k}`))).join('\n');
        const response = await fetch(`${baseUrl}/api/conversations/${conversationId}/events/import`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson' },
          body,
        }).catch(() => undefined);
        if (!response) return;
        if (response.status === 200) acknowledgedBatches.push(batch);
        await response.body?.cancel();
      }
    };
    const clients = [...Array.from({ length: APPENDERS }, (_, i) => appender(i)), ...Array.from({ length: IMPORTERS }, (_, i) => importer(i))];
    // Somewhere in the middle of the traffic; each round a different moment.
    await sleep(300 + ((round * 53) % 600));
    killed = true;
    await kill(server.child);
    await Promise.all(clients);

    server = await startServer();
    const { ids, texts } = await storedEvents(server.baseUrl, conversationId);
    const counts = new Map<string, number>();
    for (const id of ids) {
      const batch = /^(r\d+-i\d+-b\d+)-\d+$/.exec(id)?.[1];
      if (batch) counts.set(batch, (counts.get(batch) ?? 0) + 1);
    }
    tally.rounds = round + 1;
    tally.appendsAcknowledged = acknowledgedTexts.length;
    tally.importsAcknowledged = acknowledgedBatches.length;
    tally.importsAttempted = attemptedBatches.length;
    tally.lost =
      acknowledgedTexts.filter((text) => !texts.has(text)).length +
      acknowledgedBatches.reduce((missing, batch) => missing + (BATCH_EVENTS - (counts.get(batch) ?? 0)), 0);
    tally.partialBatches = [...counts.values()].filter((count) => count !== BATCH_EVENTS).length;
    tally.droppedBatches = attemptedBatches.filter((batch) => !counts.has(batch)).length;
    tally.duplicateIds = ids.length - new Set(ids).size;
    expect(tally, `after round ${round}`).toMatchObject({ lost: 0, partialBatches: 0, duplicateIds: 0 });
  }
  await kill(server.child);
  console.log(`fault agent-server SIGKILL: ${JSON.stringify(tally)}`);
  expect(tally.appendsAcknowledged).toBeGreaterThan(0);
  expect(tally.importsAcknowledged).toBeGreaterThan(0);
});
