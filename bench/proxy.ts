/**
 * The control plane's proxy to a sandbox's agent-server: GET /api/conversations/count through
 * /api/v1/sandboxes/{id}/agent/... beside its floor measured in the same run, the same request sent
 * straight to the agent-server. Requests/s at concurrency 16, the CPU time each request costs all
 * processes together (steady when the machine is shared, where requests/s is not), and latency at
 * concurrency 1 (the proxy's added p50). Rounds alternate proxy and direct, so load from the rest of the machine falls
 * on both alike. The agent-server is the bundled program in its own process, as in a sandbox; the
 * control plane runs in this process on PGlite with one RUNNING sandbox row pointing at it.
 * Run: `npm run build && LOG_LEVEL=warn npm run bench -- proxy` (LOG_LEVEL keeps the control
 * plane's per-request log lines out of the output).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { createSandboxServerApp } from '../src/sandbox-server/app.js';
import { openDatabase } from '../src/sandbox-server/db/client.js';
import { registerConfiguredEngines } from '../src/sandbox-server/engines/register-engines.js';
import { EventFeed } from '../src/sandbox-server/lifecycle-events/event-feed.js';
import { sandboxes } from '../src/sandbox-server/db/schema.js';
import { ensureDefaultSandboxSpec } from '../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { newSandboxId, newSessionApiKey } from '../src/sandbox-server/services/sandboxes/new-ids.js';
import { formatMs, formatRatio, percentile, printTable } from './measure.js';

const PROGRAM = 'dist/agent-server.js';
const API_KEY = 'bench-api-key-0123456789';
const CONCURRENCY = 16;
const THROUGHPUT_REQUESTS = 3_000;
const LATENCY_REQUESTS = 600;
const ROUNDS = 3;

interface Target {
  port: number;
  path: string;
  headers: Record<string, string>;
}

export async function run(): Promise<void> {
  await stat(PROGRAM).catch(() => {
    throw new Error(`${PROGRAM} is missing: run \`npm run build\` first`);
  });
  const data = await mkdtemp(join(tmpdir(), 'bench-proxy-'));
  const sessionApiKey = newSessionApiKey();
  const agentServer = await startAgentServer(data, sessionApiKey);
  const handle = await openDatabase({});
  await registerConfiguredEngines(handle.db, undefined, 'unix:///var/run/docker.sock');
  const server = await (async () => {
    const specId = 'bench/agent-server:proxy';
    await ensureDefaultSandboxSpec(handle.db, specId);
    const id = newSandboxId();
    await handle.db.insert(sandboxes).values({
      id,
      specId,
      engine: 'local',
      desiredState: 'RUNNING',
      status: 'RUNNING',
      sessionApiKey,
      hostPorts: { AGENT_SERVER: agentServer.port },
      hostAddress: '127.0.0.1',
    });
    const { listener } = createSandboxServerApp({
      db: handle.db,
      reconciler: { kick: () => {} },
      apiKeys: [API_KEY],
      maxRunningSandboxes: 10,
      events: new EventFeed(),
    });
    const listening = await new Promise<Server>((resolve) => {
      const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
    });
    return { listening, id };
  })();
  const direct: Target = { port: agentServer.port, path: '/api/conversations/count', headers: { 'x-session-api-key': sessionApiKey } };
  const proxied: Target = {
    port: (server.listening.address() as AddressInfo).port,
    path: `/api/v1/sandboxes/${server.id}/agent/api/conversations/count`,
    headers: { authorization: `Bearer ${API_KEY}` },
  };
  try {
    // Warm both paths (JIT, connections) before measuring.
    await throughput(direct, 500);
    await throughput(proxied, 500);
    const rates = { direct: [] as number[], proxy: [] as number[] };
    const latencies = { direct: [] as number[], proxy: [] as number[] };
    const cpu = { direct: [] as number[], proxy: [] as number[] };
    const agentPid = agentServer.child.pid as number;
    for (let round = 0; round < ROUNDS; round++) {
      rates.direct.push(await cpuPerRequest(agentPid, cpu.direct, () => throughput(direct, THROUGHPUT_REQUESTS)));
      rates.proxy.push(await cpuPerRequest(agentPid, cpu.proxy, () => throughput(proxied, THROUGHPUT_REQUESTS)));
      latencies.direct.push(...(await sequentialLatencies(direct, LATENCY_REQUESTS)));
      latencies.proxy.push(...(await sequentialLatencies(proxied, LATENCY_REQUESTS)));
    }
    const [proxyRate, directRate] = [median(rates.proxy), median(rates.direct)];
    const [proxyP50, directP50] = [percentile(latencies.proxy, 0.5), percentile(latencies.direct, 0.5)];
    const [proxyCpu, directCpu] = [median(cpu.proxy), median(cpu.direct)];
    console.log(`GET /api/conversations/count, proxy vs direct to the agent-server; ${ROUNDS} alternating rounds`);
    printTable(
      ['figure', 'proxy', 'direct (floor)', 'ratio', 'goal', 'proxy p50', 'proxy p95', 'direct p50', 'direct p95', 'samples'],
      [
        [
          `requests/s, concurrency ${CONCURRENCY} (median round)`,
          proxyRate.toFixed(0),
          directRate.toFixed(0),
          formatRatio(proxyRate / directRate),
          '>= 0.7x',
          '-',
          '-',
          '-',
          '-',
          `${ROUNDS} x ${THROUGHPUT_REQUESTS}`,
        ],
        [
          'CPU per request, all processes (us; ratio = direct/proxy)',
          proxyCpu.toFixed(0),
          directCpu.toFixed(0),
          formatRatio(directCpu / proxyCpu),
          '>= 0.7x',
          '-',
          '-',
          '-',
          '-',
          `${ROUNDS} x ${THROUGHPUT_REQUESTS}`,
        ],
        [
          'latency, concurrency 1: added p50',
          formatMs(proxyP50 - directP50),
          formatMs(directP50),
          formatRatio(proxyP50 / directP50),
          '<= 0.3 ms added',
          formatMs(proxyP50),
          formatMs(percentile(latencies.proxy, 0.95)),
          formatMs(directP50),
          formatMs(percentile(latencies.direct, 0.95)),
          String(latencies.proxy.length),
        ],
      ],
    );
  } finally {
    await new Promise((resolve) => server.listening.close(resolve));
    await handle.close();
    agentServer.child.kill('SIGTERM');
    await agentServer.exited;
    await rm(data, { recursive: true, force: true });
  }
}

async function startAgentServer(data: string, key: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OH_SESSION_API_KEYS_')));
  const child = spawn(process.execPath, [PROGRAM, '--port', '0', '--data-dir', data], {
    env: { ...env, SESSION_API_KEY: key, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (!line.includes('agent-server listening')) return;
      resolve((JSON.parse(line) as { port: number }).port);
      // From here on its request log lines are only drained.
      lines.close();
      child.stdout.resume();
    });
    lines.once('close', () => reject(new Error('agent-server exited before listening')));
  });
  return { child, port, exited };
}

/**
 * The load generator runs in a worker thread, so the client's own work never shares a thread with
 * the proxy it measures (nor, for direct runs, is it on the agent-server's). Plain JavaScript, as a
 * worker is not given the TypeScript loader.
 */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { Agent, request } = require('node:http');
const { port, path, headers, requests, concurrency } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
function get() {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, headers, agent }, (incoming) => {
      if (incoming.statusCode !== 200) reject(new Error(path + ' answered ' + incoming.statusCode));
      incoming.resume();
      incoming.once('end', resolve);
      incoming.once('error', reject);
    });
    outgoing.once('error', reject);
    outgoing.end();
  });
}
(async () => {
  const times = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < requests) {
      const at = performance.now();
      await get();
      times.push(performance.now() - at);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  parentPort.postMessage({ perSecond: requests / seconds, times });
})().catch((error) => parentPort.postMessage({ error: String(error) }));
`;

function load(target: Target, requests: number, concurrency: number): Promise<{ perSecond: number; times: number[] }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(CLIENT, { eval: true, workerData: { ...target, requests, concurrency } });
    worker.once('message', (result: { perSecond: number; times: number[]; error?: string }) => {
      if (result.error) reject(new Error(result.error));
      else resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

async function throughput(target: Target, requests: number): Promise<number> {
  return (await load(target, requests, CONCURRENCY)).perSecond;
}

async function sequentialLatencies(target: Target, requests: number): Promise<number[]> {
  return (await load(target, requests, 1)).times;
}

/**
 * Runs a throughput round and records the CPU time it cost per request, this process (load
 * generator and control plane) and the agent-server together. Unlike requests/s it hardly moves
 * when other work shares the machine, and on a saturated machine it is what bounds requests/s.
 */
async function cpuPerRequest(agentPid: number, into: number[], round: () => Promise<number>): Promise<number> {
  const [ownBefore, agentBefore] = [process.cpuUsage(), await processCpuMicros(agentPid)];
  const rate = await round();
  const own = process.cpuUsage(ownBefore);
  const agent = (await processCpuMicros(agentPid)) - agentBefore;
  into.push((own.user + own.system + agent) / THROUGHPUT_REQUESTS);
  return rate;
}

/** User plus system CPU time of a process in microseconds, from /proc (clock ticks of 10 ms). */
async function processCpuMicros(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

function median(values: number[]): number {
  return percentile(values, 0.5);
}
