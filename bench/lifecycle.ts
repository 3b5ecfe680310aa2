/**
 * Sandbox lifecycle through the reconciler, each beside its floor measured in the same run on the
 * same engine and image:
 * - cold start: row inserted (and kicked, as the API does) -> status RUNNING, i.e. the agent-server
 *   answered /alive; floor: create + start the same image with the same port binding, then poll its
 *   published port until /alive answers (what `docker run` followed by a readiness loop costs);
 * - pause and resume: desired state written -> status PAUSED / RUNNING; floor: docker pause/unpause;
 * - delete: desired DELETED -> row finished (container and volume gone); floor: docker rm -f.
 * Runs one sandbox at a time, alternating with the floor, so both see the same machine; once per OCI
 * runtime the engine has (runc, runsc), each beside the floor of the same runtime: gVisor's own cost
 * shows in both columns, ours in the ratio. LIFECYCLE_SANDBOXES and LIFECYCLE_CYCLES shrink a run.
 * Needs the engine, the base image (SANDBOX_BASE_IMAGE, default sandbox-base:local) and
 * dist/agent-server.js (`npm run build`).
 * Run: `node --import tsx bench/lifecycle.ts` (or through bench/run.ts once listed there).
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import Docker from 'dockerode';
import { OCI_RUNTIMES, type OciRuntime } from '../src/contracts/sandbox.js';
import { eq } from 'drizzle-orm';
import { type Database, openDatabase } from '../src/sandbox-server/db/client.js';
import { registerConfiguredEngines } from '../src/sandbox-server/engines/register-engines.js';
import { type SandboxRow, sandboxes, sandboxSpecs } from '../src/sandbox-server/db/schema.js';
import { Reconciler } from '../src/sandbox-server/reconciler/index.js';
import { createDockerRuntime } from '../src/sandbox-server/runtime/index.js';
import { type BenchImage, buildBenchImage, createFloorContainer, FLOOR_KEY, removeBenchResources } from './docker-fixture.js';
import { formatMs, formatRatio, percentile, printTable, timed, until } from './measure.js';

const SANDBOXES = Number(process.env.LIFECYCLE_SANDBOXES ?? 20);
const PAUSE_CYCLES = Number(process.env.LIFECYCLE_CYCLES ?? 20);
/** How often and how long to poll for a state. */
const WAIT = { pollMs: 5, timeoutMs: 60_000 };

interface Sample {
  ours: number[];
  floor: number[];
}

export async function run(): Promise<void> {
  const docker = new Docker();
  const bench = await buildBenchImage(docker, 'bench');
  const { instanceId } = bench;

  const { db, close } = await openDatabase({});
  await registerConfiguredEngines(db, undefined, 'unix:///var/run/docker.sock');
  const runtime = createDockerRuntime({ instanceId, docker });
  const reconciler = new Reconciler({ db, runtime, instanceId });
  try {
    await reconciler.start();
    const available = await runtime.runtimes();
    for (const ociRuntime of OCI_RUNTIMES.filter((name) => available.includes(name))) {
      await measureRuntime(docker, db, reconciler, bench, ociRuntime);
    }
  } finally {
    await reconciler.stop();
    await close();
    await removeBenchResources(docker, bench);
  }
}

async function measureRuntime(docker: Docker, db: Database, reconciler: Reconciler, bench: BenchImage, runtime: OciRuntime): Promise<void> {
  const { image } = bench;
  const specId = `${image}-${runtime}`;
  await db.insert(sandboxSpecs).values({
    id: specId,
    image,
    workingDir: '/workspace',
    exposedPorts: [{ name: 'AGENT_SERVER', container_port: 8000 }],
    runtime,
  });

  const start: Sample = { ours: [], floor: [] };
  const remove: Sample = { ours: [], floor: [] };
  for (let i = 0; i < SANDBOXES; i++) {
    const floor = await floorRun(docker, bench, runtime);
    start.floor.push(floor.startMs);
    const ours = await oursStart(db, reconciler, specId);
    start.ours.push(ours.startMs);
    remove.floor.push(await timed(() => floor.container.remove({ force: true, v: true })));
    remove.ours.push(await timed(() => setDesiredAndWait(db, reconciler, ours.row.id, 'DELETED', (row) => row.deletedAt !== null)));
  }

  const pause: Sample = { ours: [], floor: [] };
  const resume: Sample = { ours: [], floor: [] };
  const floor = await floorRun(docker, bench, runtime);
  const { row } = await oursStart(db, reconciler, specId);
  for (let i = 0; i < PAUSE_CYCLES; i++) {
    pause.floor.push(await timed(() => floor.container.pause()));
    resume.floor.push(await timed(() => floor.container.unpause()));
    pause.ours.push(await timed(() => setDesiredAndWait(db, reconciler, row.id, 'PAUSED', (r) => r.status === 'PAUSED')));
    resume.ours.push(await timed(() => setDesiredAndWait(db, reconciler, row.id, 'RUNNING', (r) => r.status === 'RUNNING')));
  }

  const line = (name: string, sample: Sample) => {
    const ours = { p50: percentile(sample.ours, 0.5), p95: percentile(sample.ours, 0.95) };
    const base = { p50: percentile(sample.floor, 0.5), p95: percentile(sample.floor, 0.95) };
    return [name, formatMs(ours.p50), formatMs(ours.p95), formatMs(base.p50), formatMs(base.p95), formatRatio(ours.p50 / base.p50)];
  };
  console.log(`\n${runtime}: ${SANDBOXES} sandboxes one at a time, ${PAUSE_CYCLES} pause/resume cycles; image ${image}`);
  printTable(
    ['operation', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio'],
    [
      line('cold start -> RUNNING (/alive)', start),
      line('pause -> PAUSED', pause),
      line('resume -> RUNNING', resume),
      line('delete -> container+volume gone', remove),
    ],
  );
  await floor.container.remove({ force: true, v: true });
  await setDesiredAndWait(db, reconciler, row.id, 'DELETED', (r) => r.deletedAt !== null);
}

/** The floor: the same image and port binding straight through the engine API, polled until /alive. */
async function floorRun(docker: Docker, bench: BenchImage, runtime: OciRuntime): Promise<{ container: Docker.Container; startMs: number }> {
  const started = performance.now();
  const container = await createFloorContainer(docker, bench, runtime);
  await container.start();
  const info = await container.inspect();
  const port = info.NetworkSettings.Ports['8000/tcp']?.[0]?.HostPort;
  await until(async () => {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/alive`, { headers: { 'X-Session-API-Key': FLOOR_KEY }, signal: AbortSignal.timeout(1_000) });
      await response.body?.cancel();
      return response.ok;
    } catch {
      return false;
    }
  }, WAIT);
  return { container, startMs: performance.now() - started };
}

async function oursStart(db: Database, reconciler: Reconciler, specId: string): Promise<{ row: SandboxRow; startMs: number }> {
  const started = performance.now();
  const [row] = await db
    .insert(sandboxes)
    .values({ id: randomBytes(12).toString('hex'), specId, engine: 'local', desiredState: 'RUNNING', status: 'STARTING', sessionApiKey: randomBytes(16).toString('hex') })
    .returning();
  reconciler.kick(row!.id);
  await until(async () => (await read(db, row!.id)).status === 'RUNNING', WAIT);
  return { row: row!, startMs: performance.now() - started };
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
  await until(async () => done(await read(db, id)), WAIT);
}

async function read(db: Database, id: string): Promise<SandboxRow> {
  const [row] = await db.select().from(sandboxes).where(eq(sandboxes.id, id));
  if (!row) throw new Error(`sandbox ${id} vanished`);
  return row;
}




if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
