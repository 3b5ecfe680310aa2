/**
 * Snapshot and fork through the service verbs (what the API runs), each beside its floor measured in
 * the same run on the same engine, image and sandbox:
 * - snapshot: takeSnapshot of a RUNNING sandbox -> snapshot row written; floor: docker pause, commit,
 *   a new volume filled by the same `cp -a` helper container, unpause (what the snapshot must do);
 * - fork: forkSandbox -> the new sandbox's row written (STARTING; its data already copied); floor:
 *   the snapshot floor plus a second volume copy (the new sandbox's data). The fork's start is the
 *   lifecycle bench's cold start and is not counted here.
 * Rounds alternate ours and the floor, so both see the same machine. SNAPSHOT_ROUNDS (default 5)
 * sets the samples; BENCH_RUNTIME (default runc) the OCI runtime of the sandbox.
 * Needs the engine, the base image (SANDBOX_BASE_IMAGE, default sandbox-base:local) and
 * dist/agent-server.js (`npm run build`).
 */
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { eq } from 'drizzle-orm';
import { type Database, openDatabase } from '../src/sandbox-server/db/client.js';
import { registerConfiguredEngines } from '../src/sandbox-server/engines/register-engines.js';
import { sandboxes, sandboxSpecs } from '../src/sandbox-server/db/schema.js';
import { dataVolumeNameFor } from '../src/sandbox-server/runtime/resource-names.js';
import { holdSandbox, Reconciler } from '../src/sandbox-server/reconciler/index.js';
import { createDockerRuntime, LABEL_INSTANCE } from '../src/sandbox-server/runtime/index.js';
import type { ServiceContext } from '../src/sandbox-server/services/context.js';
import { deleteSandbox } from '../src/sandbox-server/services/sandboxes/delete-sandbox.js';
import { forkSandbox } from '../src/sandbox-server/services/sandboxes/fork-sandbox.js';
import { startSandbox } from '../src/sandbox-server/services/sandboxes/start-sandbox.js';
import { takeSnapshot } from '../src/sandbox-server/services/snapshots/take-snapshot.js';
import { buildBenchImage, removeBenchResources } from './docker-fixture.js';
import { formatMs, formatRatio, percentile, printTable, timed, until } from './measure.js';

const ROUNDS = Number(process.env.SNAPSHOT_ROUNDS ?? 5);
const RUNTIME = process.env.BENCH_RUNTIME ?? 'runc';
/** How often and how long to poll for a state. */
const WAIT = { pollMs: 20, timeoutMs: 120_000 };

interface Sample {
  ours: number[];
  floor: number[];
}

export async function run(): Promise<void> {
  const docker = new Docker();
  const bench = await buildBenchImage(docker, 'bench');
  const { instanceId, image } = bench;

  const { db, close } = await openDatabase({});
  await registerConfiguredEngines(db, undefined, 'unix:///var/run/docker.sock');
  const runtime = createDockerRuntime({ instanceId, docker, copyImage: image });
  const reconciler = new Reconciler({ db, runtime, instanceId, intervalMs: 500 });
  const hold = <T>(sandboxId: string, work: () => Promise<T>) => holdSandbox({ db, kick: (id) => reconciler.kick(id) }, sandboxId, work);
  const ctx: ServiceContext = {
    db,
    reconciler,
    maxRunningSandboxes: 100,
    runtimes: { available: null },
    snapshots: { runtimeOf: () => runtime, hold },
  };
  try {
    await reconciler.start();
    await db.insert(sandboxSpecs).values({
      id: image,
      image,
      workingDir: '/workspace',
      exposedPorts: [{ name: 'AGENT_SERVER', container_port: 8000 }],
      runtime: RUNTIME === 'runsc' ? 'runsc' : 'runc',
      isDefault: true,
    });
    const source = await startSandbox(ctx, {});
    await until(async () => (await status(db, source.id)) === 'RUNNING', WAIT);
    const [row] = await db.select().from(sandboxes).where(eq(sandboxes.id, source.id));
    const container = docker.getContainer(row!.containerId!);

    const snapshot: Sample = { ours: [], floor: [] };
    const fork: Sample = { ours: [], floor: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // The floor holds the reconciler off too, or it would unpause the container under it; only
      // its engine calls are timed, so the hold's cost counts against ours.
      const floorRun = (copies: number) => hold(source.id, () => timed(() => floorSnapshot(docker, container, image, instanceId, source.id, copies)));
      snapshot.floor.push(await floorRun(1));
      snapshot.ours.push(await timed(() => takeSnapshot(ctx, { sandboxId: source.id })));
      fork.floor.push(await floorRun(2));
      let forkId = '';
      fork.ours.push(await timed(async () => (forkId = (await forkSandbox(ctx, { sandboxId: source.id })).id)));
      // Only the fork's answer is measured: its container is not wanted.
      await deleteSandbox(ctx, forkId);
    }

    const line = (name: string, sample: Sample) => [
      name,
      String(sample.ours.length),
      formatMs(percentile(sample.ours, 0.5)),
      formatMs(percentile(sample.ours, 0.95)),
      formatMs(percentile(sample.floor, 0.5)),
      formatMs(percentile(sample.floor, 0.95)),
      formatRatio(percentile(sample.ours, 0.5) / percentile(sample.floor, 0.5)),
    ];
    console.log(`\n${RUNTIME}: ${ROUNDS} rounds on one RUNNING sandbox; image ${image}`);
    printTable(
      ['operation', 'samples', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio'],
      [line('snapshot (commit + /data copy)', snapshot), line('fork -> new sandbox recorded', fork)],
    );
  } finally {
    await reconciler.stop();
    await close();
    await removeBenchResources(docker, bench);
  }
}

/**
 * The floor: pause, commit, `copies` volume copies by the same helper the runtime uses, unpause,
 * straight through the engine API; its image and volumes are removed outside the timing.
 */
async function floorSnapshot(docker: Docker, container: Docker.Container, copyImage: string, instanceId: string, sandboxId: string, copies: number): Promise<void> {
  const tag = randomBytes(6).toString('hex');
  await container.pause();
  await container.commit({ repo: 'sandbox-server-bench/floor', tag, pause: false, changes: `LABEL ${LABEL_INSTANCE}=${instanceId}` });
  for (let copy = 0; copy < copies; copy++) {
    const volume = `sandbox-server-bench-floor-${tag}-${copy}`;
    await docker.createVolume({ Name: volume, Labels: { [LABEL_INSTANCE]: instanceId } });
    const helper = await docker.createContainer({
      Image: copyImage,
      Entrypoint: ['sh', '-c', 'cp -a /from/. /to/ && du -sb /to'],
      User: '0:0',
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: 'none',
        Mounts: [
          { Type: 'volume', Source: copy === 0 ? dataVolumeNameFor(sandboxId) : `sandbox-server-bench-floor-${tag}-0`, Target: '/from', ReadOnly: true },
          { Type: 'volume', Source: volume, Target: '/to' },
        ],
      },
    });
    await helper.start();
    await helper.wait();
    await helper.remove({ force: true });
    // The snapshot's own copy is taken while paused; the new sandbox's copy is not.
    if (copy === 0) await container.unpause();
  }
}

async function status(db: Database, id: string): Promise<string | undefined> {
  const [row] = await db.select({ status: sandboxes.status }).from(sandboxes).where(eq(sandboxes.id, id));
  return row?.status;
}


