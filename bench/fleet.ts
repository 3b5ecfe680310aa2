/**
 * The fleet, through real control-plane processes on PostgreSQL (a fresh database per arm):
 * - fleet: FLEET_SANDBOXES (default 100) concurrent POST /api/v1/sandboxes, split between two
 *   replicas, placed over three engines (this machine's, and e1 and e2 from
 *   ../shared/env/extra-engines.sh 2, publishing on 127.0.0.2 and 127.0.0.3) -> all RUNNING;
 *   baseline: the same number by one replica on this machine's engine alone, in the same run.
 *   Each sandbox's own time (burst start -> its `sandbox.running`) gives the p50 and p95.
 * - takeover, FLEET_TAKEOVERS (default 3) rounds after the fleet's burst: SIGKILL the replica
 *   holding the `control-plane` lease (and the engines' `reconciler/<engine>` leases), ask the
 *   other for one sandbox per engine at once, and time until the other holds every lease the dead
 *   one held, and until those sandboxes are RUNNING (the issue's goal: within 10 s). The killed
 *   replica is started again before the next round, whose victim is then the other one.
 * Both arms are cold creates: no warm pool (SANDBOX_WARM_POOL=0), runc on every engine (e1 and e2
 * have no gVisor), MAX_RUNNING_SANDBOXES above the count, engines without max_sandboxes. Rounds do
 * not alternate: one burst per arm, baseline first. Prints the load average and the least memory
 * available during each arm; removes every container, volume, network and image it made.
 * Needs DATABASE_URL (a PostgreSQL server where it may create databases), the base image
 * (SANDBOX_BASE_IMAGE, default sandbox-base:local) and `npm run build`.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { copyImage } from '../src/sandbox-server/image/index.js';
import { EnginePageSchema } from '../src/sandbox-server/models/engine.js';
import { SandboxInfoSchema } from '../src/sandbox-server/models/sandbox.js';
import { LABEL_INSTANCE } from '../src/sandbox-server/runtime/index.js';
import { freePort, startBuiltControlPlane, stopProcess } from '../test/helpers/processes.js';
import { createDatabase } from './bench-database.js';
import { type BenchImage, buildBenchImage, controlPlaneApi, removeBenchResources, removeSandboxResources } from './docker-fixture.js';
import { formatMs, formatRatio, percentile, printTable, until as untilPolled } from './measure.js';
import { followRunningEvents } from './running-events.js';

const SANDBOXES = Number(process.env.FLEET_SANDBOXES ?? 100);
const TAKEOVERS = Number(process.env.FLEET_TAKEOVERS ?? 3);
const ROOT = join(import.meta.dirname, '..');
const SHARED = process.env.SHARED_DIR ?? join(ROOT, '..', 'shared');
const KEY = 'bench-fleet-key-0123456789';
const AUTH = { authorization: `Bearer ${KEY}` };
const TIMEOUT_MS = 900_000;
const POLL_MS = 100;
const until = (condition: () => Promise<boolean>) => untilPolled(condition, { pollMs: POLL_MS, timeoutMs: TIMEOUT_MS });

interface Engine {
  name: string;
  socket: string;
  host: string;
}

const MAIN: Engine = { name: 'main', socket: '/var/run/docker.sock', host: '127.0.0.1' };
const FLEET: Engine[] = [
  MAIN,
  { name: 'e1', socket: '/var/run/docker-e1.sock', host: '127.0.0.2' },
  { name: 'e2', socket: '/var/run/docker-e2.sock', host: '127.0.0.3' },
];

interface Replica {
  url: string;
  port: number;
  process: ChildProcess;
}

interface Arm {
  wallMs: number;
  /** Burst start -> each sandbox's `sandbox.running`, ms. */
  perSandboxMs: number[];
  byEngine: Record<string, number>;
  load: { before: number; after: number };
  minAvailableGiB: number;
  takeovers: Takeover[];
}

interface Takeover {
  leases: string[];
  leaseMs: number;
  runningMs: number;
  engines: string[];
}

export async function run(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL is not set: the fleet bench runs its replicas on PostgreSQL');
  console.log('starting engines e1 and e2 ...');
  await promisify(execFile)('bash', [join(SHARED, 'env', 'extra-engines.sh'), '2'], { timeout: 300_000 });
  const dockers = new Map(FLEET.map((engine) => [engine.name, new Docker({ socketPath: engine.socket })]));
  const main = dockers.get(MAIN.name)!;
  const bench = await buildBenchImage(main, 'bench-fleet');
  let baseline: Arm | undefined;
  let fleet: Arm | undefined;
  try {
    // Copied before the replicas start, so that each finds it present rather than building it on the first engine it leases.
    for (const engine of FLEET.filter((e) => e !== MAIN)) await copyImage(main, dockers.get(engine.name)!, bench.image, (line) => console.log(`${engine.name}: ${line}`));
    console.log(`\nbaseline: ${SANDBOXES} sandboxes, 1 replica, engine ${MAIN.name} ...`);
    baseline = await runArm(adminUrl, bench, [MAIN], 1, dockers);
    console.log(`\nfleet: ${SANDBOXES} sandboxes, 2 replicas, engines ${FLEET.map((e) => e.name).join(', ')} ...`);
    fleet = await runArm(adminUrl, bench, FLEET, 2, dockers);
  } finally {
    for (const docker of dockers.values()) await removeBenchResources(docker, bench);
    const left = await Promise.all([...dockers.values()].map(async (docker) => (await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${bench.instanceId}`] } })).length));
    console.log(`\ncleaned up: ${left.reduce((sum, count) => sum + count, 0)} containers left on the 3 engines`);
  }
  report(baseline, fleet);
}

/** One arm: its replicas on a fresh database, the burst, for two replicas the takeovers, then everything removed. */
async function runArm(adminUrl: string, bench: BenchImage, engines: Engine[], replicaCount: number, dockers: Map<string, Docker>): Promise<Arm> {
  const database = await createDatabase('bench_fleet', adminUrl);
  const env = {
    DATABASE_URL: database.url,
    SANDBOX_SERVER_API_KEYS: KEY,
    SANDBOX_SERVER_INSTANCE: bench.instanceId,
    AGENT_SERVER_IMAGE: bench.image,
    SANDBOX_BASE_IMAGE: bench.baseImage,
    SANDBOX_RUNTIME: 'runc',
    SANDBOX_WARM_POOL: '0',
    MAX_RUNNING_SANDBOXES: String(SANDBOXES + TAKEOVERS * engines.length + 10),
    DOCKER_ENGINES: engines.map((engine) => `${engine.name}=unix://${engine.socket}@${engine.host}`).join(','),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  const replicas: Replica[] = [];
  const memory = watchAvailableMemory();
  try {
    // One after the other: the first migrates the database and takes every lease.
    replicas.push(await startReplica(env));
    await until(async () => {
      const held = await leasesHeld(replicas[0]!);
      return ['control-plane', ...engines.map((e) => `reconciler/${e.name}`)].every((lease) => held.includes(lease));
    });
    await until(async () => Object.values(await engineHealth(replicas[0]!)).every((health) => health === 'HEALTHY'));
    while (replicas.length < replicaCount) replicas.push(await startReplica(env));

    const load = { before: loadavg()[0]!, after: 0 };
    const running = await followRunningEvents(replicas.at(-1)!.url, AUTH);
    const began = performance.now();
    const started = await Promise.all(Array.from({ length: SANDBOXES }, (_, i) => startSandbox(replicas[i % replicas.length]!)));
    await withDeadline(Promise.all(started.map((s) => running.seen(s.id))), () => `${started.filter((s) => !running.arrivedAt.has(s.id)).length} sandboxes not RUNNING`);
    const wallMs = performance.now() - began;
    load.after = loadavg()[0]!;
    running.stop();
    const perSandboxMs = started.map((s) => running.arrivedAt.get(s.id)! - began);
    const byEngine: Record<string, number> = {};
    for (const s of started) byEngine[s.engine] = (byEngine[s.engine] ?? 0) + 1;
    console.log(`all ${SANDBOXES} RUNNING after ${formatMs(wallMs)}; by engine ${JSON.stringify(byEngine)}; load average ${load.before.toFixed(1)} -> ${load.after.toFixed(1)}; least memory available ${memory.minGiB().toFixed(1)} GiB`);

    const takeovers: Takeover[] = [];
    if (replicaCount > 1) {
      for (let round = 0; round < TAKEOVERS; round++) takeovers.push(await takeOver(replicas, engines, env));
    }
    return { wallMs, perSandboxMs, byEngine, load, minAvailableGiB: memory.minGiB(), takeovers };
  } finally {
    memory.stop();
    // SIGTERM leaves the sandboxes running (they would be adopted); the bench removes them itself.
    await Promise.all(replicas.map((replica) => stopProcess(replica.process, 'SIGTERM')));
    for (const engine of engines) await removeSandboxResources(dockers.get(engine.name)!, bench.instanceId);
    await database.drop();
  }
}

/**
 * SIGKILLs the replica holding `control-plane`, asks the survivor at once for one sandbox per
 * engine, and times the survivor holding every lease the dead one held, and those sandboxes
 * RUNNING; then starts the dead one again, which now follows.
 */
async function takeOver(replicas: Replica[], engines: Engine[], env: Record<string, string>): Promise<Takeover> {
  const holders = await Promise.all(replicas.map(async (replica) => ({ replica, leases: await leasesHeld(replica) })));
  const victim = holders.find((h) => h.leases.includes('control-plane'));
  if (!victim) throw new Error('no replica holds the control-plane lease');
  const survivor = replicas.find((r) => r !== victim.replica)!;
  const running = await followRunningEvents(survivor.url, AUTH);
  await stopProcess(victim.replica.process, 'SIGKILL');
  const killedAt = performance.now();
  const asked = await Promise.all(engines.map(() => startSandbox(survivor)));
  await until(async () => {
    const held = await leasesHeld(survivor);
    return victim.leases.every((lease) => held.includes(lease));
  });
  const leaseMs = performance.now() - killedAt;
  await withDeadline(Promise.all(asked.map((s) => running.seen(s.id))), () => 'sandboxes asked after the kill not RUNNING');
  const runningMs = Math.max(...asked.map((s) => running.arrivedAt.get(s.id)!)) - killedAt;
  running.stop();
  const takeover = { leases: victim.leases, leaseMs, runningMs, engines: asked.map((s) => s.engine).sort() };
  console.log(
    `takeover: holder of ${victim.leases.join(', ')} SIGKILLed; the other held them after ${formatMs(leaseMs)}; ` +
      `sandboxes asked after the kill (on ${takeover.engines.join(', ')}) RUNNING after ${formatMs(runningMs)}`,
  );
  replicas[replicas.indexOf(victim.replica)] = await startReplica(env, victim.replica.port);
  return takeover;
}

function report(baseline: Arm | undefined, fleet: Arm | undefined): void {
  if (!baseline || !fleet) return;
  console.log(
    `\n${SANDBOXES} cold creates per arm (warm pools 0, runc); fleet: 3 engines ${JSON.stringify(fleet.byEngine)}, 2 replicas, requests alternating; ` +
      `baseline: 1 engine, 1 replica; one burst each, baseline first`,
  );
  const ratio = (ours: number, floor: number) => formatRatio(ours / floor);
  const p50 = (values: number[]) => percentile(values, 0.5);
  const p95 = (values: number[]) => percentile(values, 0.95);
  printTable(
    ['figure', 'fleet', 'baseline', 'ratio', 'fleet p50 / p95', 'baseline p50 / p95', 'samples'],
    [
      [`${SANDBOXES} POSTs -> all RUNNING (wall)`, formatMs(fleet.wallMs), formatMs(baseline.wallMs), ratio(fleet.wallMs, baseline.wallMs), '-', '-', '1 + 1'],
      [
        'burst start -> each sandbox RUNNING',
        formatMs(p50(fleet.perSandboxMs)),
        formatMs(p50(baseline.perSandboxMs)),
        ratio(p50(fleet.perSandboxMs), p50(baseline.perSandboxMs)),
        `${formatMs(p50(fleet.perSandboxMs))} / ${formatMs(p95(fleet.perSandboxMs))}`,
        `${formatMs(p50(baseline.perSandboxMs))} / ${formatMs(p95(baseline.perSandboxMs))}`,
        `${fleet.perSandboxMs.length} + ${baseline.perSandboxMs.length}`,
      ],
    ],
  );
  const leaseMs = fleet.takeovers.map((t) => t.leaseMs);
  const runningMs = fleet.takeovers.map((t) => t.runningMs);
  if (fleet.takeovers.length > 0) {
    console.log(`\nTakeover after a SIGKILL of the replica holding control-plane and ${fleet.takeovers[0]!.leases.length - 1} reconciler leases (lease 6 s; goal <= 10 s)`);
    printTable(
      ['figure', 'p50', 'p95', 'max', 'goal', 'samples'],
      [
        ['kill -> the other replica holds every lease', formatMs(p50(leaseMs)), formatMs(p95(leaseMs)), formatMs(Math.max(...leaseMs)), '<= 10 s', String(leaseMs.length)],
        ['kill -> one sandbox per engine asked after it RUNNING', formatMs(p50(runningMs)), formatMs(p95(runningMs)), formatMs(Math.max(...runningMs)), '<= 10 s', String(runningMs.length)],
      ],
    );
  }
  console.log(
    `\nload average (1 min, 2 cores) baseline ${baseline.load.before.toFixed(1)} -> ${baseline.load.after.toFixed(1)}, fleet ${fleet.load.before.toFixed(1)} -> ${fleet.load.after.toFixed(1)}; ` +
      `least memory available: baseline ${baseline.minAvailableGiB.toFixed(1)} GiB, fleet ${fleet.minAvailableGiB.toFixed(1)} GiB`,
  );
}

/** The built control plane as its own process, on `port` or a free one, once it answers /alive. */
async function startReplica(env: Record<string, string>, port?: number): Promise<Replica> {
  const listenOn = port ?? (await freePort());
  const child = await startBuiltControlPlane(listenOn, env, TIMEOUT_MS);
  return { url: `http://127.0.0.1:${listenOn}`, port: listenOn, process: child };
}

async function startSandbox(replica: Replica): Promise<{ id: string; engine: string }> {
  return controlPlaneApi(replica.url, AUTH)(SandboxInfoSchema, 'POST', '/api/v1/sandboxes');
}

/** The leases this replica holds, from its /metrics. */
async function leasesHeld(replica: Replica): Promise<string[]> {
  const response = await fetch(`${replica.url}/metrics`, { headers: AUTH, signal: AbortSignal.timeout(20_000) });
  const text = await response.text();
  return [...text.matchAll(/^sandbox_server_lease_held\{lease="([^"]+)"\} 1$/gm)].map((match) => match[1]!);
}

async function engineHealth(replica: Replica): Promise<Record<string, string | null>> {
  const { items } = await controlPlaneApi(replica.url, AUTH)(EnginePageSchema, 'GET', '/api/v1/engines');
  return Object.fromEntries(items.map((engine) => [engine.name, engine.health]));
}

/** The least MemAvailable seen, read from /proc/meminfo every second. */
function watchAvailableMemory(): { minGiB(): number; stop(): void } {
  let min = Number.POSITIVE_INFINITY;
  const read = async () => {
    const kb = Number(/^MemAvailable:\s+(\d+) kB$/m.exec(await readFile('/proc/meminfo', 'utf8'))?.[1]);
    min = Math.min(min, kb / 1024 / 1024);
  };
  void read();
  const timer = setInterval(() => void read(), 1_000);
  return { minGiB: () => min, stop: () => clearInterval(timer) };
}

async function withDeadline<T>(promise: Promise<T>, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what()}`)), TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
