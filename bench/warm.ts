/**
 * Warm time to interactive: POST /api/v1/sandboxes answered from the default spec's warm pool, then
 * the first `echo ok` run through the control plane's proxy, measured from before the POST to the
 * command's output. Its floor, measured in the same run and alternating with it: `docker run` of the
 * same image (create + start with the same port binding) until the first `echo ok` answers directly
 * on the published port. Between samples the claimed sandbox is deleted and the pool refilled, so
 * each sample finds a ready member (the steady state of a pool sized for its traffic); hits and
 * misses are counted and printed. Peers' published medians for create -> first command (ComputeSDK
 * benchmark, 2026-04-01) are printed beside it, and each sample split into the claim (POST answered)
 * and the first command. WARM_SAMPLES sets the rounds (default 20),
 * WARM_RUNTIME the OCI runtime (default runc). On a fresh PostgreSQL database when DATABASE_URL is
 * set, else PGlite (bench-database.ts).
 * Needs the engine, the base image (SANDBOX_BASE_IMAGE, default sandbox-base:local) and
 * `npm run build`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Docker from 'dockerode';
import { z } from 'zod';
import { loadConfig } from '../src/sandbox-server/config.js';
import { SandboxInfoSchema } from '../src/sandbox-server/models/sandbox.js';
import { SandboxSpecPageSchema } from '../src/sandbox-server/models/sandbox-spec.js';
import { startSandboxServer } from '../src/sandbox-server/server.js';
import { type BenchImage, buildBenchImage, controlPlaneApi, createFloorContainer, echoDirect, echoThroughProxy, removeBenchResources, waitFor } from './docker-fixture.js';
import { benchDatabase } from './bench-database.js';
import { formatMs, formatRatio, loadAverage, percentile, printTable, until } from './measure.js';

const SAMPLES = Number(process.env.WARM_SAMPLES ?? 20);
const RUNTIME = process.env.WARM_RUNTIME ?? 'runc';
const POOL = 2;
const TIMEOUT_MS = 120_000;
/** ComputeSDK benchmark, 2026-04-01: median create -> first command. */
const PEERS = [
  ['Daytona', 110],
  ['E2B', 440],
] as const;

export async function run(): Promise<void> {
  const docker = new Docker();
  const bench = await buildBenchImage(docker, 'bench-warm');
  const { instanceId, image, baseImage } = bench;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-warm-'));
  const database = await benchDatabase('bench_warm');
  const server = await startSandboxServer(
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      AGENT_SERVER_IMAGE: image,
      SANDBOX_BASE_IMAGE: baseImage,
      SANDBOX_SERVER_INSTANCE: instanceId,
      SANDBOX_RUNTIME: RUNTIME,
      SANDBOX_WARM_POOL: String(POOL),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    }),
  );
  const api = controlPlaneApi(server.url);
  const poolReady = () =>
    until(async () => (await api(SandboxSpecPageSchema, 'GET', '/api/v1/sandbox-specs/search')).items.some((s) => s.is_default && s.warm_pool_ready === POOL), waitFor(TIMEOUT_MS));

  const loadBefore = loadAverage();
  const warm: number[] = [];
  const claim: number[] = [];
  const floor: number[] = [];
  let misses = 0;
  try {
    for (let i = 0; i < SAMPLES; i++) {
      floor.push(await floorRun(docker, bench));
      await poolReady();
      const started = performance.now();
      const sandbox = await api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes');
      claim.push(performance.now() - started);
      if (sandbox.status !== 'RUNNING') misses++;
      await echoThroughProxy(server.url, sandbox.id, TIMEOUT_MS);
      warm.push(performance.now() - started);
      await api(z.unknown(), 'DELETE', `/api/v1/sandboxes/${sandbox.id}`);
      await until(async () => (await docker.listContainers({ all: true, filters: { label: [`sandbox-server.id=${sandbox.id}`] } })).length === 0, waitFor(TIMEOUT_MS));
    }
  } finally {
    await server.close();
    await database.drop();
    await removeBenchResources(docker, bench);
    await rm(dataDir, { recursive: true, force: true });
  }

  const ours = { p50: percentile(warm, 0.5), p95: percentile(warm, 0.95) };
  const base = { p50: percentile(floor, 0.5), p95: percentile(floor, 0.95) };
  console.log(`\n${RUNTIME}: ${SAMPLES} rounds alternating; pool of ${POOL} for the default spec; ${SAMPLES - misses} hits, ${misses} misses; on ${database.name}`);
  console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after`);
  printTable(
    ['figure (goal <= 50 ms p50)', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio', 'samples'],
    [
      [
        'warm TTI: POST -> first `echo ok` via proxy',
        formatMs(ours.p50),
        formatMs(ours.p95),
        formatMs(base.p50),
        formatMs(base.p95),
        formatRatio(ours.p50 / base.p50),
        `${warm.length} + ${floor.length}`,
      ],
      ['  of which the claim: POST answered RUNNING', formatMs(percentile(claim, 0.5)), formatMs(percentile(claim, 0.95)), '', '', '', String(claim.length)],
      [
        '  of which the first command: POST answered -> `ok` via proxy',
        formatMs(percentile(warm.map((ms, i) => ms - claim[i]!), 0.5)),
        formatMs(percentile(warm.map((ms, i) => ms - claim[i]!), 0.95)),
        '',
        '',
        '',
        String(warm.length),
      ],
    ],
  );
  console.log('');
  printTable(
    ['peer (create -> first command, published median)', 'p50', 'ours p50 / theirs'],
    PEERS.map(([name, ms]) => [name, formatMs(ms), formatRatio(ours.p50 / ms)]),
  );
}

/** `docker run` of the image until `echo ok` answers on its published port, directly. */
async function floorRun(docker: Docker, bench: BenchImage): Promise<number> {
  const started = performance.now();
  const container = await createFloorContainer(docker, bench, RUNTIME);
  try {
    await container.start();
    const port = (await container.inspect()).NetworkSettings.Ports['8000/tcp']?.[0]?.HostPort;
    await until(() => echoDirect(`http://127.0.0.1:${port}`), waitFor(TIMEOUT_MS));
    return performance.now() - started;
  } finally {
    await container.remove({ force: true, v: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
