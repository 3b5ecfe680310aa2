/**
 * The cold path, through the real control plane (startSandboxServer, no warm pool) beside two floors
 * (floors.ts) measured in the same run on the same engine and image, rounds alternating the three
 * and rotating their order:
 * - cold start: POST /api/v1/sandboxes -> its `sandbox.running` lifecycle event received (on the
 *   SSE stream, as `sandboxctl sandboxes wait` sees it, so the bench adds no load); floors: create
 *   + start -> /alive answers (polled every 5 ms);
 * - cold time to interactive: POST -> first `echo ok` output through our proxy, asked at once
 *   (the proxy waits for the sandbox); floors: the same `docker run` -> first `ok` asked directly;
 * - a burst of COLD_BURST (default 40; 0 skips it) concurrent POSTs -> all RUNNING; floor: as many
 *   concurrent plain `docker run`s -> all answering /alive.
 * The full floor is `docker run` with everything our create passes, on a network made ahead (as
 * our spare networks are); the plain floor is the image alone. Each start is split into phases
 * (phases.ts). COLD_SAMPLES (default 10) sets the rounds, COLD_RUNTIMES the OCI runtimes (default
 * runc,runsc: those the engine has), one control plane each, its default spec on that runtime, on
 * a fresh PostgreSQL database when DATABASE_URL is set, else PGlite (bench-database.ts).
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
import type { ContainerSpec } from '../src/sandbox-server/reconciler/container-request.js';
import { LABEL_SANDBOX_ID } from '../src/sandbox-server/runtime/index.js';
import { startSandboxServer } from '../src/sandbox-server/server.js';
import { type BenchImage, buildBenchImage, controlPlaneApi, createFloorContainer, echoThroughProxy, removeBenchResources, waitFor } from './docker-fixture.js';
import { answersAlive, createFloors, type FloorAnswer, type Floors } from './floors.js';
import { formatMs, formatRatio, loadAverage, percentile, printTable, until } from './measure.js';
import { containerPhases, type Phases, printPhases } from './phases.js';
import { followRunningEvents } from './running-events.js';
import { benchDatabase } from './bench-database.js';

const SAMPLES = Number(process.env.COLD_SAMPLES ?? 10);
const BURST = Number(process.env.COLD_BURST ?? 40);
const RUNTIMES = (process.env.COLD_RUNTIMES ?? 'runc,runsc').split(',');
const TIMEOUT_MS = 180_000;
const CONTENDERS = ['ours', 'full', 'plain'] as const;
type Contender = (typeof CONTENDERS)[number];

interface Sample {
  ms: Record<Contender, number[]>;
  phases: Record<Contender, Phases[]>;
}

const emptySample = (): Sample => ({ ms: { ours: [], full: [], plain: [] }, phases: { ours: [], full: [], plain: [] } });

export async function run(): Promise<void> {
  const docker = new Docker();
  const available = Object.keys((await docker.info()).Runtimes ?? {});
  const bench = await buildBenchImage(docker, 'bench-cold');
  const floors = createFloors(docker, bench);
  try {
    for (const runtime of RUNTIMES.filter((name) => available.includes(name))) await measureRuntime(docker, bench, floors, runtime);
  } finally {
    await floors.close();
    await removeBenchResources(docker, bench);
  }
}

async function measureRuntime(docker: Docker, bench: BenchImage, floors: Floors, runtime: string): Promise<void> {
  const loadBefore = loadAverage();
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-cold-'));
  const database = await benchDatabase('bench_cold');
  const server = await startSandboxServer(
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      AGENT_SERVER_IMAGE: bench.image,
      SANDBOX_BASE_IMAGE: bench.baseImage,
      SANDBOX_SERVER_INSTANCE: bench.instanceId,
      SANDBOX_RUNTIME: runtime,
      SANDBOX_WARM_POOL: '0',
      MAX_RUNNING_SANDBOXES: String(BURST + 10),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    }),
  );
  const api = controlPlaneApi(server.url);
  const running = await followRunningEvents(server.url);
  const spec = defaultSpecOf(await api(SandboxSpecPageSchema, 'GET', '/api/v1/sandbox-specs/search'));
  const removeOurs = async (ids: string[]) => {
    await Promise.all(ids.map((id) => api(z.unknown(), 'DELETE', `/api/v1/sandboxes/${id}`)));
    for (const id of ids) await until(async () => (await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${id}`] } })).length === 0, waitFor(TIMEOUT_MS));
  };
  const ours = async (answer: FloorAnswer) => {
    const began = Date.now();
    const sandbox = await api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes');
    if (answer === 'alive') await running.seen(sandbox.id);
    else await echoThroughProxy(server.url, sandbox.id, TIMEOUT_MS);
    const done = Date.now();
    const phases = await phasesOf(docker, sandbox.id, began, done);
    await removeOurs([sandbox.id]);
    return { ms: done - began, phases };
  };

  const start = emptySample();
  const tti = emptySample();
  const burst = { ours: [] as number[], plain: [] as number[] };
  try {
    // One unmeasured round first: the first create of an image pays for checks later ones reuse.
    await ours('alive');
    await floors.run('full', spec, 'alive', TIMEOUT_MS);
    for (let i = 0; i < SAMPLES; i++) {
      for (const [sample, answer] of [[start, 'alive'], [tti, 'echo']] as const) {
        for (const contender of rotated(CONTENDERS, i)) {
          const result = contender === 'ours' ? await ours(answer) : await floors.run(contender, spec, answer, TIMEOUT_MS);
          sample.ms[contender].push(result.ms);
          sample.phases[contender].push(result.phases);
        }
      }
    }
    if (BURST > 0) {
      let began = Date.now();
      const containers = await Promise.all(Array.from({ length: BURST }, () => plainUntilAlive(docker, bench, runtime)));
      burst.plain.push(Date.now() - began);
      for (const container of containers) await container.remove({ force: true, v: true });
      began = Date.now();
      const ids = await Promise.all(Array.from({ length: BURST }, async () => (await api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes')).id));
      await Promise.all(ids.map((id) => running.seen(id)));
      burst.ours.push(Date.now() - began);
      await removeOurs(ids);
    }
  } finally {
    running.stop();
    await server.close();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }

  console.log(`\n${runtime}: ${SAMPLES} rounds alternating ours, the full floor and the plain floor; no warm pool; burst of ${BURST}; on ${database.name}`);
  console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after`);
  const p50 = (values: number[]) => percentile(values, 0.5);
  const line = (name: string, sample: Sample) => [
    name,
    formatMs(p50(sample.ms.ours)),
    formatMs(percentile(sample.ms.ours, 0.95)),
    formatMs(p50(sample.ms.full)),
    formatMs(p50(sample.ms.plain)),
    formatRatio(p50(sample.ms.ours) / p50(sample.ms.full)),
    formatRatio(p50(sample.ms.ours) / p50(sample.ms.plain)),
    '<= 1.1x full, <= 1.2x plain',
    String(sample.ms.ours.length),
  ];
  printTable(
    ['figure', 'ours p50', 'ours p95', 'full floor p50', 'plain floor p50', 'vs full', 'vs plain', 'goal', 'samples'],
    [
      line('cold start: POST -> RUNNING seen', start),
      line('cold TTI: POST -> first `echo ok` via proxy', tti),
      ...(BURST > 0
        ? [[`burst of ${BURST}: POSTs -> all RUNNING`, formatMs(burst.ours[0]!), '', '', formatMs(burst.plain[0]!), '', formatRatio(burst.ours[0]! / burst.plain[0]!), '<= 1.0x plain', '1']]
        : []),
    ],
  );
  for (const [name, sample, doneAs] of [
    ['cold start', start, 'RUNNING seen (floors: /alive answered)'],
    ['cold TTI', tti, 'first command answered'],
  ] as const) {
    console.log(`\nWhere the time goes, ${name} (ms since the request)`);
    printPhases(doneAs, [
      ['ours', sample.phases.ours],
      ['full floor', sample.phases.full],
      ['plain floor', sample.phases.plain],
    ]);
  }
}

/** The default spec as the API shows it, in the shape containers are made from. */
function defaultSpecOf(page: z.infer<typeof SandboxSpecPageSchema>): ContainerSpec {
  const spec = page.items.find((item) => item.is_default);
  if (!spec) throw new Error('the control plane has no default spec');
  return {
    id: spec.id,
    image: spec.image,
    command: spec.command,
    initialEnv: spec.initial_env,
    secretEnv: spec.secret_env,
    secretHosts: spec.secret_hosts,
    workingDir: spec.working_dir,
    exposedPorts: spec.exposed_ports,
    cpus: spec.cpus,
    memoryMb: spec.memory_mb,
    pidsLimit: spec.pids_limit,
    runtime: spec.runtime,
    network: spec.network,
  };
}

/** `items` turned left by `by` places, so that no contender always runs first (on a warmer or cooler engine). */
function rotated<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** A plain floor container started and answering /alive, for the burst; left for the caller to remove. */
async function plainUntilAlive(docker: Docker, bench: BenchImage, runtime: string): Promise<Docker.Container> {
  const container = await createFloorContainer(docker, bench, runtime);
  await container.start();
  const port = (await container.inspect()).NetworkSettings.Ports['8000/tcp']?.[0]?.HostPort;
  await until(() => answersAlive(`http://127.0.0.1:${port}`), waitFor(TIMEOUT_MS));
  return container;
}

async function phasesOf(docker: Docker, sandboxId: string, began: number, done: number): Promise<Phases> {
  const [listed] = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
  if (!listed) throw new Error(`no container for ${sandboxId}`);
  return containerPhases(docker.getContainer(listed.Id), began, done);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
