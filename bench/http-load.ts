/**
 * What the HTTP benches share: the bundled agent-server as its own process, as in a sandbox, and a
 * load generator in a worker thread that measures requests/s, latencies and the CPU each request
 * costs.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { percentile } from './measure.js';

export const AGENT_SERVER_PROGRAM = 'dist/agent-server.js';

export interface Target {
  port: number;
  path: string;
  headers: Record<string, string>;
}

export async function startAgentServer(data: string, key: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OH_SESSION_API_KEYS_')));
  const child = spawn(process.execPath, [AGENT_SERVER_PROGRAM, '--port', '0', '--data-dir', data], {
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

export function load(target: Target, requests: number, concurrency: number): Promise<{ perSecond: number; times: number[] }> {
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

export async function throughput(target: Target, requests: number, concurrency: number): Promise<number> {
  return (await load(target, requests, concurrency)).perSecond;
}

export async function sequentialLatencies(target: Target, requests: number): Promise<number[]> {
  return (await load(target, requests, 1)).times;
}

/**
 * Runs a throughput round and records the CPU time it cost per request, this process (load
 * generator and control plane) and the processes `pids` (the agent-server, an app) together. Unlike requests/s it hardly moves
 * when other work shares the machine, and on a saturated machine it is what bounds requests/s.
 */
export async function cpuPerRequest(pids: readonly number[], requests: number, into: number[], round: () => Promise<number>): Promise<number> {
  const ownBefore = process.cpuUsage();
  const othersBefore = await othersCpuMicros(pids);
  const rate = await round();
  const own = process.cpuUsage(ownBefore);
  const others = (await othersCpuMicros(pids)) - othersBefore;
  into.push((own.user + own.system + others) / requests);
  return rate;
}

async function othersCpuMicros(pids: readonly number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) total += await processCpuMicros(pid);
  return total;
}

/** User plus system CPU time of a process in microseconds, from /proc (clock ticks of 10 ms). */
async function processCpuMicros(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

export function median(values: number[]): number {
  return percentile(values, 0.5);
}
