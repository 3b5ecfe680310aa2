/**
 * The cold path, through the real control plane (startSandboxServer, no warm pool) beside its floor
 * measured in the same run on the same engine and image, rounds alternating:
 * - cold start: POST /api/v1/sandboxes -> its `sandbox.running` lifecycle event received (on the
 *   SSE stream, as `sandboxctl sandboxes wait` sees it, so the bench adds no load); floor:
 *   create + start the image with the same port binding -> /alive answers (polled every 5 ms);
 * - cold time to interactive: POST -> first `echo ok` output through our proxy, asked at once
 *   (the proxy waits for the sandbox); floor: the same `docker run` -> first `ok` asked directly;
 * - a burst of COLD_BURST (default 40) concurrent POSTs -> all RUNNING; floor: as many concurrent
 *   `docker run`s -> all answering /alive.
 * Each TTI sample is split into phases from the engine's and the agent-server's own clocks
 * (container Created and StartedAt, the agent-server's `listening` log line): request -> container
 * created, created -> started, started -> listening, listening -> first command answered; and for
 * starts, listening -> RUNNING seen. COLD_SAMPLES (default 10) sets the rounds, COLD_RUNTIME the
 * OCI runtime (default runc).
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
import { LABEL_SANDBOX_ID } from '../src/sandbox-server/runtime/index.js';
import { startSandboxServer } from '../src/sandbox-server/server.js';
import { type BenchImage, buildBenchImage, controlPlaneApi, createFloorContainer, echoDirect, echoThroughProxy, FLOOR_KEY, removeBenchResources, waitFor } from './docker-fixture.js';
import { formatMs, formatRatio, percentile, printTable, until } from './measure.js';
import { followRunningEvents } from './running-events.js';

const SAMPLES = Number(process.env.COLD_SAMPLES ?? 10);
const BURST = Number(process.env.COLD_BURST ?? 40);
const RUNTIME = process.env.COLD_RUNTIME ?? 'runc';
const TIMEOUT_MS = 180_000;

/** Times in ms since the sample began (epoch ms for the clocks read from the engine and logs). */
interface Phases {
  created: number;
  started: number;
  listening: number;
  done: number;
}

export async function run(): Promise<void> {
  const docker = new Docker();
  const bench = await buildBenchImage(docker, 'bench-cold');
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-cold-'));
  const server = await startSandboxServer(
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      AGENT_SERVER_IMAGE: bench.image,
      SANDBOX_BASE_IMAGE: bench.baseImage,
      SANDBOX_SERVER_INSTANCE: bench.instanceId,
      SANDBOX_RUNTIME: RUNTIME,
      SANDBOX_WARM_POOL: '0',
      MAX_RUNNING_SANDBOXES: String(BURST + 10),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    }),
  );
  const api = controlPlaneApi(server.url);
  const running = await followRunningEvents(server.url);
  const removeOurs = async (ids: string[]) => {
    await Promise.all(ids.map((id) => api(z.unknown(), 'DELETE', `/api/v1/sandboxes/${id}`)));
    for (const id of ids) await until(async () => (await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${id}`] } })).length === 0, waitFor(TIMEOUT_MS));
  };

  const start = { ours: [] as number[], floor: [] as number[], oursPhases: [] as Phases[], floorPhases: [] as Phases[] };
  const tti = { ours: [] as number[], floor: [] as number[], oursPhases: [] as Phases[], floorPhases: [] as Phases[] };
  const burst = { ours: [] as number[], floor: [] as number[] };
  try {
    for (let i = 0; i < SAMPLES; i++) {
      const floorStart = await floorRun(docker, bench, 'alive');
      start.floor.push(floorStart.ms);
      start.floorPhases.push(floorStart.phases);

      let began = Date.now();
      let sandbox = await api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes');
      await running.seen(sandbox.id);
      start.ours.push(Date.now() - began);
      start.oursPhases.push(await phasesOf(docker, sandbox.id, began, Date.now()));
      await removeOurs([sandbox.id]);

      const floorTti = await floorRun(docker, bench, 'echo');
      tti.floor.push(floorTti.ms);
      tti.floorPhases.push(floorTti.phases);

      began = Date.now();
      sandbox = await api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes');
      await echoThroughProxy(server.url, sandbox.id, TIMEOUT_MS);
      tti.ours.push(Date.now() - began);
      tti.oursPhases.push(await phasesOf(docker, sandbox.id, began, Date.now()));
      await removeOurs([sandbox.id]);
    }
    if (BURST > 0) {
      let began = Date.now();
      const floors = await Promise.all(Array.from({ length: BURST }, () => floorRun(docker, bench, 'alive', false)));
      burst.floor.push(Date.now() - began);
      for (const floor of floors) await floor.container.remove({ force: true, v: true });
      began = Date.now();
      const ids = await Promise.all(Array.from({ length: BURST }, async () => (await api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes')).id));
      await Promise.all(ids.map((id) => running.seen(id)));
      burst.ours.push(Date.now() - began);
      await removeOurs(ids);
    }
  } finally {
    running.stop();
    await server.close();
    await removeBenchResources(docker, bench);
    await rm(dataDir, { recursive: true, force: true });
  }

  console.log(`\n${RUNTIME}: ${SAMPLES} rounds alternating ours and the floor; no warm pool; burst of ${BURST}`);
  const line = (name: string, goal: string, sample: { ours: number[]; floor: number[] }) => [
    name,
    formatMs(percentile(sample.ours, 0.5)),
    formatMs(percentile(sample.ours, 0.95)),
    formatMs(percentile(sample.floor, 0.5)),
    formatMs(percentile(sample.floor, 0.95)),
    formatRatio(percentile(sample.ours, 0.5) / percentile(sample.floor, 0.5)),
    goal,
    `${sample.ours.length} + ${sample.floor.length}`,
  ];
  printTable(
    ['figure', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio', 'goal', 'samples'],
    [
      line('cold start: POST -> RUNNING seen', '<= 1.15x', start),
      line('cold TTI: POST -> first `echo ok` via proxy', '<= 1.15x', tti),
      ...(BURST > 0 ? [line(`burst of ${BURST}: POSTs -> all RUNNING`, '<= 1.0x', burst)] : []),
    ],
  );
  console.log('\nWhere the time goes (p50 of each phase, ms; ours vs floor)');
  const phase = (name: string, ours: Phases[], floor: Phases[], from: keyof Phases | 'request', to: keyof Phases) => {
    const span = (p: Phases) => p[to] - (from === 'request' ? 0 : p[from]);
    const [o, f] = [percentile(ours.map(span), 0.5), percentile(floor.map(span), 0.5)];
    return [name, formatMs(o), formatMs(f), formatMs(o - f)];
  };
  printTable(
    ['phase', 'ours p50', 'floor p50', 'ours - floor'],
    [
      phase('request -> container created', tti.oursPhases, tti.floorPhases, 'request', 'created'),
      phase('created -> started', tti.oursPhases, tti.floorPhases, 'created', 'started'),
      phase('started -> agent-server listening', tti.oursPhases, tti.floorPhases, 'started', 'listening'),
      phase('listening -> RUNNING seen (floor: /alive answered)', start.oursPhases, start.floorPhases, 'listening', 'done'),
      phase('listening -> first command answered', tti.oursPhases, tti.floorPhases, 'listening', 'done'),
    ],
  );
}

/** `docker run` of the image until /alive answers or `echo ok` runs, on its published port, directly. */
async function floorRun(
  docker: Docker,
  bench: BenchImage,
  answer: 'alive' | 'echo',
  remove = true,
): Promise<{ ms: number; phases: Phases; container: Docker.Container }> {
  const began = Date.now();
  const container = await createFloorContainer(docker, bench, RUNTIME);
  try {
    await container.start();
    const port = (await container.inspect()).NetworkSettings.Ports['8000/tcp']?.[0]?.HostPort;
    const base = `http://127.0.0.1:${port}`;
    await until(answer === 'alive' ? () => answersAlive(base) : () => echoDirect(base), waitFor(TIMEOUT_MS));
    const done = Date.now();
    return { ms: done - began, phases: await containerPhases(container, began, done), container };
  } finally {
    if (remove) await container.remove({ force: true, v: true });
  }
}

async function phasesOf(docker: Docker, sandboxId: string, began: number, done: number): Promise<Phases> {
  const [listed] = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
  if (!listed) throw new Error(`no container for ${sandboxId}`);
  return containerPhases(docker.getContainer(listed.Id), began, done);
}

/** The engine's Created and StartedAt and the agent-server's `listening` line, relative to `began`. */
async function containerPhases(container: Docker.Container, began: number, done: number): Promise<Phases> {
  const info = await container.inspect();
  const log = (await container.logs({ stdout: true, stderr: true, follow: false })).toString('utf8');
  const listening = log
    .split('\n')
    .map((line) => line.slice(line.indexOf('{"level"')))
    .find((line) => line.includes('"agent-server listening"'));
  const listeningAt = listening ? (JSON.parse(listening) as { time: number }).time : Number.NaN;
  return {
    created: Date.parse(info.Created) - began,
    started: Date.parse(info.State.StartedAt) - began,
    listening: listeningAt - began,
    done: done - began,
  };
}

async function answersAlive(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/alive`, { headers: { 'X-Session-API-Key': FLOOR_KEY }, signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
