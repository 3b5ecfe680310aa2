/**
 * Sandbox lifecycle through the reconciler, each beside its floor measured in the same run on the
 * same engine and image:
 * - cold start: row inserted (and kicked, as the API does) -> status RUNNING read, i.e. the
 *   agent-server answered /alive; floors (floors.ts): the full floor, `docker run` with everything
 *   our create passes on a network made ahead, and the plain floor, the image alone; each polled on
 *   its published port until /alive answers; split into phases (phases.ts);
 * - pause and resume: desired state written -> status PAUSED / RUNNING read; floor: docker
 *   pause/unpause through the engine API of a full floor container (the same limits as ours);
 * - delete: desired DELETED -> row finished (container and volume gone); floor: docker rm -f.
 * The spec has the default spec's limits (SANDBOX_DEFAULT_*) and the runtime keeps spare networks
 * as the control plane's does (SANDBOX_SPARE_NETWORKS). Runs one sandbox at a time, alternating
 * with the floors, so all see the same machine; once per OCI runtime the engine has (runc, runsc),
 * each beside the floors of the same runtime: gVisor's own cost shows in every column, ours in the
 * ratio. The bench reads a status after each write the reconciler reports. LIFECYCLE_SANDBOXES and LIFECYCLE_CYCLES
 * shrink a run. On a fresh PostgreSQL database when DATABASE_URL is set, else PGlite
 * (bench-database.ts). Needs the engine, the base image (SANDBOX_BASE_IMAGE, default sandbox-base:local)
 * and dist/agent-server.js (`npm run build`).
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import Docker from 'dockerode';
import { OCI_RUNTIMES, type OciRuntime } from '../src/contracts/sandbox.js';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../src/sandbox-server/config.js';
import { type Database, openDatabase } from '../src/sandbox-server/db/client.js';
import { registerConfiguredEngines } from '../src/sandbox-server/engines/register-engines.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes, sandboxSpecs } from '../src/sandbox-server/db/schema.js';
import { Reconciler } from '../src/sandbox-server/reconciler/index.js';
import { createDockerRuntime, LABEL_SANDBOX_ID } from '../src/sandbox-server/runtime/index.js';
import { benchDatabase } from './bench-database.js';
import { type BenchImage, buildBenchImage, createFloorContainer, removeBenchResources } from './docker-fixture.js';
import { createFloors, type Floors } from './floors.js';
import { formatMs, formatRatio, loadAverage, percentile, printTable, timed } from './measure.js';
import { containerPhases, type Phases, printPhases } from './phases.js';

const SANDBOXES = Number(process.env.LIFECYCLE_SANDBOXES ?? 20);
const PAUSE_CYCLES = Number(process.env.LIFECYCLE_CYCLES ?? 20);
/** How long to wait for a state. */
const WAIT = { timeoutMs: 60_000 };
const DEFAULTS = loadConfig({});

interface Sample {
  ours: number[];
  floor: number[];
}

export async function run(): Promise<void> {
  const docker = new Docker();
  const bench = await buildBenchImage(docker, 'bench');
  const { instanceId } = bench;

  const database = await benchDatabase('bench_lifecycle');
  console.log(`on ${database.name}`);
  const { db, close } = await openDatabase({ url: database.url });
  await registerConfiguredEngines(db, undefined, 'unix:///var/run/docker.sock');
  const runtime = createDockerRuntime({ instanceId, docker, spareNetworks: DEFAULTS.SANDBOX_SPARE_NETWORKS });
  const reconciler = new Reconciler({ db, runtime, instanceId });
  const floors = createFloors(docker, bench);
  try {
    await reconciler.start();
    const available = await runtime.runtimes();
    for (const ociRuntime of OCI_RUNTIMES.filter((name) => available.includes(name))) {
      await measureRuntime(docker, db, reconciler, floors, bench, ociRuntime);
    }
  } finally {
    await reconciler.stop();
    await close();
    await database.drop();
    await floors.close();
    await removeBenchResources(docker, bench);
  }
}

async function measureRuntime(docker: Docker, db: Database, reconciler: Reconciler, floors: Floors, bench: BenchImage, runtime: OciRuntime): Promise<void> {
  const loadBefore = loadAverage();
  const { image } = bench;
  const [spec] = await db
    .insert(sandboxSpecs)
    .values({
      id: `${image}-${runtime}`,
      image,
      workingDir: '/workspace',
      exposedPorts: [{ name: 'AGENT_SERVER', container_port: 8000 }],
      cpus: DEFAULTS.SANDBOX_DEFAULT_CPUS,
      memoryMb: DEFAULTS.SANDBOX_DEFAULT_MEMORY_MB,
      pidsLimit: DEFAULTS.SANDBOX_DEFAULT_PIDS,
      runtime,
    })
    .returning();

  const start = { ours: [] as number[], full: [] as number[], plain: [] as number[] };
  const phases = { ours: [] as Phases[], full: [] as Phases[], plain: [] as Phases[] };
  const remove: Sample = { ours: [], floor: [] };
  // One unmeasured start first: the first create of an image pays for checks later ones reuse.
  await setDesiredAndWait(db, reconciler, (await oursStart(docker, db, reconciler, spec!)).row.id, 'DELETED', (row) => row.deletedAt !== null);
  for (let i = 0; i < SANDBOXES; i++) {
    for (const kind of ['plain', 'full'] as const) {
      const floor = await floors.run(kind, spec!, 'alive', WAIT.timeoutMs);
      start[kind].push(floor.ms);
      phases[kind].push(floor.phases);
    }
    const ours = await oursStart(docker, db, reconciler, spec!);
    start.ours.push(ours.startMs);
    phases.ours.push(ours.phases);
    remove.floor.push(await removeFloorTimed(docker, bench, runtime));
    remove.ours.push(await timed(() => setDesiredAndWait(db, reconciler, ours.row.id, 'DELETED', (row) => row.deletedAt !== null)));
  }

  const pause: Sample = { ours: [], floor: [] };
  const resume: Sample = { ours: [], floor: [] };
  const floor = await floors.started('full', spec!, WAIT.timeoutMs);
  const { row } = await oursStart(docker, db, reconciler, spec!);
  for (let i = 0; i < PAUSE_CYCLES; i++) {
    pause.floor.push(await timed(() => floor.container.pause()));
    resume.floor.push(await timed(() => floor.container.unpause()));
    pause.ours.push(await timed(() => setDesiredAndWait(db, reconciler, row.id, 'PAUSED', (r) => r.status === 'PAUSED')));
    resume.ours.push(await timed(() => setDesiredAndWait(db, reconciler, row.id, 'RUNNING', (r) => r.status === 'RUNNING')));
  }

  const line = (name: string, sample: Sample, goal: string) => {
    const ours = { p50: percentile(sample.ours, 0.5), p95: percentile(sample.ours, 0.95) };
    const base = { p50: percentile(sample.floor, 0.5), p95: percentile(sample.floor, 0.95) };
    return [name, formatMs(ours.p50), formatMs(ours.p95), formatMs(base.p50), formatMs(base.p95), formatRatio(ours.p50 / base.p50), goal];
  };
  console.log(`\n${runtime}: ${SANDBOXES} sandboxes one at a time, ${PAUSE_CYCLES} pause/resume cycles; image ${image}`);
  console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after`);
  printTable(
    ['operation', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio', 'goal'],
    [
      line('cold start -> RUNNING (/alive) vs full floor', { ours: start.ours, floor: start.full }, '<= 1.1x'),
      line('cold start -> RUNNING (/alive) vs plain floor', { ours: start.ours, floor: start.plain }, '<= 1.2x'),
      line('pause -> PAUSED vs docker pause', pause, '<= 1.2x'),
      line('resume -> RUNNING vs docker unpause', resume, '<= 1.2x'),
      line('delete -> container+volume gone vs docker rm -f', remove, ''),
    ],
  );
  console.log('\nWhere the time goes, cold start (ms since the request)');
  printPhases('RUNNING read (floors: /alive answered)', [
    ['ours', phases.ours],
    ['full floor', phases.full],
    ['plain floor', phases.plain],
  ]);
  await floor.remove();
  await setDesiredAndWait(db, reconciler, row.id, 'DELETED', (r) => r.deletedAt !== null);
}

/** docker rm -f of a started plain floor container, timed. */
async function removeFloorTimed(docker: Docker, bench: BenchImage, runtime: OciRuntime): Promise<number> {
  const container = await createFloorContainer(docker, bench, runtime);
  await container.start();
  return timed(() => container.remove({ force: true, v: true }));
}

async function oursStart(docker: Docker, db: Database, reconciler: Reconciler, spec: SandboxSpecRow): Promise<{ row: SandboxRow; startMs: number; phases: Phases }> {
  const began = Date.now();
  const started = performance.now();
  const [row] = await db
    .insert(sandboxes)
    .values({ id: randomBytes(12).toString('hex'), specId: spec.id, engine: 'local', desiredState: 'RUNNING', status: 'STARTING', sessionApiKey: randomBytes(16).toString('hex') })
    .returning();
  reconciler.kick(row!.id);
  await written(db, reconciler, row!.id, (r) => r.status === 'RUNNING');
  const startMs = performance.now() - started;
  const [listed] = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${row!.id}`] } });
  if (!listed) throw new Error(`no container for ${row!.id}`);
  return { row: row!, startMs, phases: await containerPhases(docker.getContainer(listed.Id), began, began + startMs) };
}

async function setDesiredAndWait(
  db: Database,
  reconciler: Reconciler,
  id: string,
  desiredState: SandboxRow['desiredState'],
  done: (row: SandboxRow) => boolean,
): Promise<void> {
  await db.update(sandboxes).set({ desiredState }).where(eq(sandboxes.id, id));
  reconciler.kick(id);
  await written(db, reconciler, id, done);
}

/**
 * Settles once the row is `done`, reading it after each write the reconciler reports
 * (onSandboxWritten, as the proxy's target cache hears of them) rather than polling the database,
 * which would load the one connection of the in-process database the reconciler uses too.
 */
async function written(db: Database, reconciler: Reconciler, id: string, done: (row: SandboxRow) => boolean): Promise<void> {
  const deadline = Date.now() + WAIT.timeoutMs;
  for (;;) {
    let stop = () => {};
    const wrote = new Promise<void>((resolve) => {
      stop = reconciler.onSandboxWritten((sandboxId) => sandboxId === id && resolve());
    });
    try {
      if (done(await read(db, id))) return;
      if (Date.now() > deadline) throw new Error(`sandbox ${id}: timed out after ${WAIT.timeoutMs} ms`);
      await Promise.race([wrote, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    } finally {
      stop();
    }
  }
}

async function read(db: Database, id: string): Promise<SandboxRow> {
  const [row] = await db.select().from(sandboxes).where(eq(sandboxes.id, id));
  if (!row) throw new Error(`sandbox ${id} vanished`);
  return row;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
