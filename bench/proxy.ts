/**
 * The control plane's proxy to a sandbox's agent-server: GET /api/conversations/count through
 * /api/v1/sandboxes/{id}/agent/... beside its floor measured in the same run, the same request sent
 * straight to the agent-server. Issue 30's figures: requests/s at concurrency 1 and 16 (each as a
 * ratio to direct), and the latency the proxy adds at concurrency 1 (p50); besides, the CPU time
 * each request costs all processes together (steady when the machine is shared, where requests/s
 * is not). Rounds alternate proxy and direct, so load from the rest of the machine falls on both
 * alike. The agent-server is the bundled program in its own process, as in a sandbox; the control
 * plane runs in this process on PGlite with one RUNNING sandbox row pointing at it.
 * Run: `npm run build && LOG_LEVEL=warn npm run bench -- proxy` (LOG_LEVEL keeps the control
 * plane's per-request log lines out of the output).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSessionApiKey } from '../src/sandbox-server/services/sandboxes/new-ids.js';
import { AGENT_SERVER_PROGRAM as PROGRAM, cpuPerRequest, load, median, startAgentServer, type Target, throughput as throughputAt } from './http-load.js';
import { startControlPlaneBeside } from './control-plane-fixture.js';
import { formatMs, formatRatio, loadAverage, percentile, printTable } from './measure.js';

const API_KEY = 'bench-api-key-0123456789';
const CONCURRENCY = 16;
const THROUGHPUT_REQUESTS = 3_000;
const LATENCY_REQUESTS = 600;
const ROUNDS = 3;

export async function run(): Promise<void> {
  await stat(PROGRAM).catch(() => {
    throw new Error(`${PROGRAM} is missing: run \`npm run build\` first`);
  });
  const data = await mkdtemp(join(tmpdir(), 'bench-proxy-'));
  const sessionApiKey = newSessionApiKey();
  const agentServer = await startAgentServer(data, sessionApiKey);
  const server = await startControlPlaneBeside(agentServer.port, sessionApiKey, API_KEY);
  const direct: Target = { port: agentServer.port, path: '/api/conversations/count', headers: { 'x-session-api-key': sessionApiKey } };
  const proxied: Target = {
    port: server.port,
    path: `/api/v1/sandboxes/${server.sandboxId}/agent/api/conversations/count`,
    headers: { authorization: `Bearer ${API_KEY}` },
  };
  const loadBefore = loadAverage();
  try {
    // Warm both paths (JIT, connections) before measuring.
    await throughput(direct, 500);
    await throughput(proxied, 500);
    const rates = { direct: [] as number[], proxy: [] as number[] };
    const sequential = { direct: [] as number[], proxy: [] as number[] };
    const latencies = { direct: [] as number[], proxy: [] as number[] };
    const cpu = { direct: [] as number[], proxy: [] as number[] };
    const agentPid = agentServer.child.pid as number;
    for (let round = 0; round < ROUNDS; round++) {
      rates.direct.push(await cpuPerRequest([agentPid], THROUGHPUT_REQUESTS, cpu.direct, () => throughput(direct, THROUGHPUT_REQUESTS)));
      rates.proxy.push(await cpuPerRequest([agentPid], THROUGHPUT_REQUESTS, cpu.proxy, () => throughput(proxied, THROUGHPUT_REQUESTS)));
      for (const [name, target] of [['direct', direct], ['proxy', proxied]] as const) {
        const one = await load(target, LATENCY_REQUESTS, 1);
        sequential[name].push(one.perSecond);
        latencies[name].push(...one.times);
      }
    }
    const [proxyRate, directRate] = [median(rates.proxy), median(rates.direct)];
    const [proxyRate1, directRate1] = [median(sequential.proxy), median(sequential.direct)];
    const [proxyP50, directP50] = [percentile(latencies.proxy, 0.5), percentile(latencies.direct, 0.5)];
    const [proxyCpu, directCpu] = [median(cpu.proxy), median(cpu.direct)];
    console.log(`GET /api/conversations/count, proxy vs direct to the agent-server; ${ROUNDS} alternating rounds`);
    const rows = `${ROUNDS} x ${THROUGHPUT_REQUESTS}`;
    printTable(
      ['figure', 'proxy', 'direct (floor)', 'ratio', 'goal', 'proxy p50', 'proxy p95', 'direct p50', 'direct p95', 'samples'],
      [
        ['requests/s, concurrency 1 (median round)', proxyRate1.toFixed(0), directRate1.toFixed(0), formatRatio(proxyRate1 / directRate1), '>= 0.8x', '-', '-', '-', '-', `${ROUNDS} x ${LATENCY_REQUESTS}`],
        [`requests/s, concurrency ${CONCURRENCY} (median round)`, proxyRate.toFixed(0), directRate.toFixed(0), formatRatio(proxyRate / directRate), '>= 0.8x', '-', '-', '-', '-', rows],
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
        ['CPU per request, all processes (us; ratio = direct/proxy)', proxyCpu.toFixed(0), directCpu.toFixed(0), formatRatio(directCpu / proxyCpu), '-', '-', '-', '-', '-', rows],
      ],
    );
    console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after`);
  } finally {
    await server.close();
    agentServer.child.kill('SIGTERM');
    await agentServer.exited;
    await rm(data, { recursive: true, force: true });
  }
}

const throughput = (target: Target, requests: number) => throughputAt(target, requests, CONCURRENCY);
