/**
 * Any image, `npm run bench -- images`: for each OCI runtime of IMAGES_RUNTIMES (default
 * runc,runsc: those the engine has), one control plane (docker-control-plane.ts) with a spec of
 * IMAGES_IMAGE (default sandbox-python:local, which has no node), beside floors measured in the same
 * run on the same engine:
 * - cold start, the agent-server brought in: POST /api/v1/sandboxes -> its `sandbox.running`
 *   lifecycle event received (SSE); floor: `docker run` of the same image with the same mounts (the
 *   bundle volume read-only, a data volume), the same command (the agent-server through the
 *   bundle's loader, creating its user) and the same port binding -> /alive answers (polled every
 *   5 ms). Rounds alternate, in turn order; a first, unmeasured start fills the bundle volume, as an
 *   engine's first such start does. Each start is split into phases (phases.ts).
 * - clone at start into a RUNNING sandbox of that image beside a plain `git clone` from the same
 *   local git server (clone-fixture.ts), split into the clone on the control plane and the copy in.
 * IMAGES_SAMPLES (default 10) and IMAGES_CLONE_ROUNDS (default 5) set the rounds. Needs the engine,
 * sandbox-python:local (../shared/env/more-images.sh), the base image and `npm run build`.
 */
import { pathToFileURL } from 'node:url';
import Docker from 'dockerode';
import { AGENT_SERVER_PORT_NAME } from '../src/contracts/sandbox.js';
import { agentServerTarget, createAgentClient } from '../src/sandbox-server/agent-client.js';
import { type SandboxInfo, SandboxInfoSchema } from '../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../src/sandbox-server/models/sandbox-spec.js';
import { bringAgentServer, bundleVolumeFor } from '../src/sandbox-server/runtime/agent-bundle.js';
import { LABEL_INSTANCE } from '../src/sandbox-server/runtime/index.js';
import { measureCloneAtStart, printCloneAtStart } from './clone-fixture.js';
import { type DockerControlPlane, startDockerControlPlane } from './docker-control-plane.js';
import { type BenchImage, buildBenchImage, FLOOR_KEY, removeBenchResources, waitFor } from './docker-fixture.js';
import { answersAlive } from './floors.js';
import { formatMs, formatRatio, loadAverage, percentile, printTable, until } from './measure.js';
import { containerPhases, type Phases, printPhases } from './phases.js';

const SAMPLES = Number(process.env.IMAGES_SAMPLES ?? 10);
const CLONE_ROUNDS = Number(process.env.IMAGES_CLONE_ROUNDS ?? 5);
const RUNTIMES = (process.env.IMAGES_RUNTIMES ?? 'runc,runsc').split(',');
const IMAGE = process.env.IMAGES_IMAGE ?? 'sandbox-python:local';
const TIMEOUT_MS = 180_000;
const SPEC = 'bench-images';

interface Start {
  ms: number;
  phases: Phases;
}

export async function run(): Promise<void> {
  const docker = new Docker();
  const available = Object.keys((await docker.info()).Runtimes ?? {});
  const bench = await buildBenchImage(docker, 'bench-images');
  const bundle = { volume: bundleVolumeFor((await docker.getImage(bench.image).inspect()).Id), version: 'bench' };
  try {
    for (const runtime of RUNTIMES.filter((name) => available.includes(name))) await measureRuntime(docker, bench, bundle, runtime);
  } finally {
    await removeBenchResources(docker, bench);
    // Its image is gone, so nothing will use its bundle again.
    await docker.getVolume(bundle.volume).remove().catch(() => undefined);
  }
}

async function measureRuntime(docker: Docker, bench: BenchImage, bundle: { volume: string; version: string }, runtime: string): Promise<void> {
  const loadBefore = loadAverage();
  const cp = await startDockerControlPlane(docker, bench, runtime);
  const ours = { ms: [] as number[], phases: [] as Phases[] };
  const floor = { ms: [] as number[], phases: [] as Phases[] };
  let firstStart = 0;
  try {
    await cp.api(SandboxSpecInfoSchema, 'POST', '/api/v1/sandbox-specs', { id: SPEC, image: IMAGE, runtime });
    // The engine's first start of another image fills the bundle volume; every later one mounts it.
    const first = await startOurs(cp);
    firstStart = first.ms;
    await cp.removeOurs([first.sandbox.id]);
    for (let i = 0; i < SAMPLES; i++) {
      // In turn order, so that neither always runs on a warmer or cooler engine.
      let mine: Start;
      let theirs: Start;
      if (i % 2 === 0) {
        mine = await oneOfOurs(cp);
        theirs = await floorRun(docker, bench.instanceId, bundle, runtime, i);
      } else {
        theirs = await floorRun(docker, bench.instanceId, bundle, runtime, i);
        mine = await oneOfOurs(cp);
      }
      for (const [into, sample] of [[ours, mine], [floor, theirs]] as const) {
        into.ms.push(sample.ms);
        into.phases.push(sample.phases);
      }
    }
    console.log(`\n${IMAGE} under ${runtime}: ${SAMPLES} rounds alternating ours and the floor; no warm pool`);
    console.log(`first start on the engine (fills the bundle volume): ${formatMs(firstStart)}`);
    printTable(
      ['figure', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio', 'goal', 'samples'],
      [
        [
          'cold start, agent-server brought in: POST -> RUNNING seen',
          formatMs(percentile(ours.ms, 0.5)),
          formatMs(percentile(ours.ms, 0.95)),
          formatMs(percentile(floor.ms, 0.5)),
          formatMs(percentile(floor.ms, 0.95)),
          formatRatio(percentile(ours.ms, 0.5) / percentile(floor.ms, 0.5)),
          '<= 1.15x',
          `${ours.ms.length} + ${floor.ms.length}`,
        ],
      ],
    );
    console.log('\nWhere the time goes, cold start (ms since the request)');
    printPhases('RUNNING seen (floor: /alive answered)', [
      ['ours', ours.phases],
      ['floor', floor.phases],
    ]);

    const sandbox = (await startOurs(cp)).sandbox;
    const client = createAgentClient(agentTargetOf(sandbox));
    printCloneAtStart(await measureCloneAtStart(client, (round) => `/workspace/round-${round}`, CLONE_ROUNDS), `a ${runtime} sandbox of ${IMAGE}`);
    await cp.removeOurs([sandbox.id]);
    console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after`);
  } finally {
    await cp.close();
  }
}

/** One measured start of ours, its sandbox removed after. */
async function oneOfOurs(cp: DockerControlPlane): Promise<Start> {
  const { sandbox, ...start } = await startOurs(cp);
  await cp.removeOurs([sandbox.id]);
  return start;
}

/** POST a sandbox of the spec -> its `sandbox.running` seen; the sandbox as it is then. */
async function startOurs(cp: DockerControlPlane): Promise<Start & { sandbox: SandboxInfo }> {
  const began = Date.now();
  const created = await cp.api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: SPEC });
  await cp.running.seen(created.id);
  const done = Date.now();
  const [sandbox] = await cp.api(SandboxInfoSchema.array(), 'GET', `/api/v1/sandboxes?id=${created.id}`);
  return { ms: done - began, phases: await cp.phasesOf(created.id, began, done), sandbox: sandbox! };
}

function agentTargetOf(sandbox: SandboxInfo) {
  const exposed = sandbox.exposed_urls?.find((url) => url.name === AGENT_SERVER_PORT_NAME);
  if (!exposed || !sandbox.session_api_key) throw new Error(`sandbox ${sandbox.id} shows no agent-server`);
  return agentServerTarget(new URL(exposed.url).hostname, exposed.port, sandbox.session_api_key);
}

/** `docker run` of the image with the bundle and a data volume mounted, as ours runs it, until /alive answers. */
async function floorRun(docker: Docker, instanceId: string, bundle: { volume: string; version: string }, runtime: string, round: number): Promise<Start> {
  const began = Date.now();
  const dataVolume = `bench-images-floor-${instanceId}-${runtime}-${round}`;
  const labels = { [LABEL_INSTANCE]: instanceId };
  const container = await docker.createContainer(
    bringAgentServer(
      {
        Image: IMAGE,
        // Without a session key the agent-server only listens on loopback, unreachable from the host.
        Env: [`OH_SESSION_API_KEYS_0=${FLOOR_KEY}`],
        WorkingDir: '/workspace',
        Labels: labels,
        ExposedPorts: { '8000/tcp': {} },
        HostConfig: {
          PortBindings: { '8000/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
          Runtime: runtime,
          Init: true,
          Mounts: [{ Type: 'volume', Source: dataVolume, Target: '/data', VolumeOptions: { NoCopy: false, Labels: labels, DriverConfig: { Name: 'local', Options: {} } } }],
        },
      },
      bundle,
      '/data',
    ),
  );
  try {
    await container.start();
    const port = (await container.inspect()).NetworkSettings.Ports['8000/tcp']?.[0]?.HostPort;
    await until(() => answersAlive(`http://127.0.0.1:${port}`), waitFor(TIMEOUT_MS));
    const done = Date.now();
    return { ms: done - began, phases: await containerPhases(container, began, done) };
  } finally {
    await container.remove({ force: true, v: true });
    await docker.getVolume(dataVolume).remove().catch(() => undefined);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
