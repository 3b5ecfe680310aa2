/**
 * Preview URLs: GET / of an app through `/api/v1/sandboxes/{id}/ports/{port}/` (the control plane,
 * then the sandbox's agent-server, then the app) beside its floor measured in the same run, the
 * same request sent straight to the app's port. Requests/s at concurrency 16 and latency at
 * concurrency 1, rounds alternating. As in bench/proxy.ts the agent-server is the bundled program in
 * its own process, and the control plane runs in this process on PGlite with one RUNNING sandbox row
 * pointing at it; the app is a plain node:http server in a process of its own, as the agent would
 * start it. Run: `npm run build && LOG_LEVEL=warn npm run bench -- preview`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSessionApiKey } from '../src/sandbox-server/services/sandboxes/new-ids.js';
import { AGENT_SERVER_PROGRAM, cpuPerRequest, median, sequentialLatencies, startAgentServer, type Target, throughput } from './http-load.js';
import { startControlPlaneBeside } from './control-plane-fixture.js';
import { formatMs, formatRatio, loadAverage, percentile, printTable } from './measure.js';

const API_KEY = 'bench-api-key-0123456789';
const CONCURRENCY = 16;
const THROUGHPUT_REQUESTS = 2_000;
const LATENCY_REQUESTS = 400;
const ROUNDS = 3;
const APP = `require('node:http').createServer((req, res) => res.end('<!doctype html><p>hello</p>')).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

export async function run(): Promise<void> {
  await stat(AGENT_SERVER_PROGRAM).catch(() => {
    throw new Error(`${AGENT_SERVER_PROGRAM} is missing: run \`npm run build\` first`);
  });
  const data = await mkdtemp(join(tmpdir(), 'bench-preview-'));
  const sessionApiKey = newSessionApiKey();
  const agentServer = await startAgentServer(data, sessionApiKey);
  const app = spawn(process.execPath, ['-e', APP], { stdio: ['ignore', 'pipe', 'inherit'] });
  const appPort = await new Promise<number>((resolve) => app.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  const controlPlane = await startControlPlaneBeside(agentServer.port, sessionApiKey, API_KEY);
  const direct: Target = { port: appPort, path: '/', headers: {} };
  const previewed: Target = { port: controlPlane.port, path: `/api/v1/sandboxes/${controlPlane.sandboxId}/ports/${appPort}/`, headers: { authorization: `Bearer ${API_KEY}` } };
  const loadBefore = loadAverage();
  try {
    await throughput(direct, 300, CONCURRENCY);
    await throughput(previewed, 300, CONCURRENCY);
    const rates = { direct: [] as number[], preview: [] as number[] };
    const latencies = { direct: [] as number[], preview: [] as number[] };
    const cpu = { direct: [] as number[], preview: [] as number[] };
    const pids = [agentServer.child.pid as number, app.pid as number];
    for (let round = 0; round < ROUNDS; round++) {
      rates.direct.push(await cpuPerRequest(pids, THROUGHPUT_REQUESTS, cpu.direct, () => throughput(direct, THROUGHPUT_REQUESTS, CONCURRENCY)));
      rates.preview.push(await cpuPerRequest(pids, THROUGHPUT_REQUESTS, cpu.preview, () => throughput(previewed, THROUGHPUT_REQUESTS, CONCURRENCY)));
      latencies.direct.push(...(await sequentialLatencies(direct, LATENCY_REQUESTS)));
      latencies.preview.push(...(await sequentialLatencies(previewed, LATENCY_REQUESTS)));
    }
    const [previewRate, directRate] = [median(rates.preview), median(rates.direct)];
    const [previewP50, directP50] = [percentile(latencies.preview, 0.5), percentile(latencies.direct, 0.5)];
    console.log(`GET / of an app, through a preview URL (control plane -> agent-server -> app) vs straight to its port; ${ROUNDS} alternating rounds`);
    printTable(
      ['figure', 'preview', 'direct (floor)', 'ratio', 'goal', 'preview p95', 'direct p95', 'samples'],
      [
        [`requests/s, concurrency ${CONCURRENCY} (median round)`, previewRate.toFixed(0), directRate.toFixed(0), formatRatio(previewRate / directRate), '>= 0.7x', '-', '-', `${ROUNDS} x ${THROUGHPUT_REQUESTS}`],
        [
          'latency, concurrency 1: p50 (ratio = preview/direct)',
          formatMs(previewP50),
          formatMs(directP50),
          formatRatio(previewP50 / directP50),
          '-',
          formatMs(percentile(latencies.preview, 0.95)),
          formatMs(percentile(latencies.direct, 0.95)),
          String(latencies.preview.length),
        ],
        ['CPU per request, all processes (us; ratio = direct/preview)', median(cpu.preview).toFixed(0), median(cpu.direct).toFixed(0), formatRatio(median(cpu.direct) / median(cpu.preview)), '-', '-', '-', `${ROUNDS} x ${THROUGHPUT_REQUESTS}`],
      ],
    );
    console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after`);
  } finally {
    await controlPlane.close();
    app.kill('SIGTERM');
    agentServer.child.kill('SIGTERM');
    await agentServer.exited;
    await rm(data, { recursive: true, force: true });
  }
}
