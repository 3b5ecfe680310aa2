/**
 * Any image: the cold start of a sandbox of an image without node (IMAGES_IMAGE, default
 * sandbox-python:local), with the agent-server brought in by the control plane, beside its floor
 * measured in the same run on the same engine, rounds alternating:
 * - ours: POST /api/v1/sandboxes of a spec of that image -> its `sandbox.running` lifecycle event
 *   received (SSE); the bundle volume is filled once before the rounds, as an engine's first such
 *   start does;
 * - floor: `docker run` of the same image with the same mounts (the bundle volume read-only, a data
 *   volume), the same command (the agent-server through the bundle's loader, creating its user) and
 *   the same port binding -> /alive answers (polled every 5 ms).
 * IMAGES_SAMPLES (default 10) sets the rounds, IMAGES_RUNTIME the OCI runtime (default runc).
 * Needs the engine, sandbox-python:local (../shared/env/more-images.sh), the base image and
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
import { SandboxSpecInfoSchema } from '../src/sandbox-server/models/sandbox-spec.js';
import { bringAgentServer, bundleVolumeFor } from '../src/sandbox-server/runtime/agent-bundle.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID } from '../src/sandbox-server/runtime/index.js';
import { startSandboxServer } from '../src/sandbox-server/server.js';
import { buildBenchImage, controlPlaneApi, FLOOR_KEY, removeBenchResources, waitFor } from './docker-fixture.js';
import { formatMs, formatRatio, percentile, printTable, until } from './measure.js';
import { followRunningEvents } from './running-events.js';

const SAMPLES = Number(process.env.IMAGES_SAMPLES ?? 10);
const RUNTIME = process.env.IMAGES_RUNTIME ?? 'runc';
const IMAGE = process.env.IMAGES_IMAGE ?? 'sandbox-python:local';
const TIMEOUT_MS = 180_000;
const SPEC = 'bench-images';

export async function run(): Promise<void> {
  const docker = new Docker();
  const bench = await buildBenchImage(docker, 'bench-images');
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-images-'));
  const server = await startSandboxServer(
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      AGENT_SERVER_IMAGE: bench.image,
      SANDBOX_BASE_IMAGE: bench.baseImage,
      SANDBOX_SERVER_INSTANCE: bench.instanceId,
      SANDBOX_RUNTIME: RUNTIME,
      SANDBOX_WARM_POOL: '0',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    }),
  );
  const api = controlPlaneApi(server.url);
  const running = await followRunningEvents(server.url);
  const bundle = { volume: bundleVolumeFor((await docker.getImage(bench.image).inspect()).Id), version: 'bench' };
  const startOurs = async (): Promise<{ ms: number; id: string }> => {
    const began = Date.now();
    const sandbox = await api(SandboxInfoSchema, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: SPEC });
    await running.seen(sandbox.id);
    return { ms: Date.now() - began, id: sandbox.id };
  };
  const removeOurs = async (id: string) => {
    await api(z.unknown(), 'DELETE', `/api/v1/sandboxes/${id}`);
    await until(async () => (await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${id}`] } })).length === 0, waitFor(TIMEOUT_MS));
  };

  const ours: number[] = [];
  const floor: number[] = [];
  let firstStart = 0;
  try {
    await api(SandboxSpecInfoSchema, 'POST', '/api/v1/sandbox-specs', { id: SPEC, image: IMAGE, runtime: RUNTIME });
    // The engine's first start of another image fills the bundle volume; every later one mounts it.
    const first = await startOurs();
    firstStart = first.ms;
    await removeOurs(first.id);
    for (let i = 0; i < SAMPLES; i++) {
      floor.push(await floorRun(docker, bench.instanceId, bundle, i));
      const sample = await startOurs();
      ours.push(sample.ms);
      await removeOurs(sample.id);
    }
  } finally {
    running.stop();
    await server.close();
    await removeBenchResources(docker, bench);
    // Its image is gone, so nothing will use its bundle again.
    await docker.getVolume(bundle.volume).remove().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }

  console.log(`\n${IMAGE} under ${RUNTIME}: ${SAMPLES} rounds alternating ours and the floor; no warm pool`);
  console.log(`first start on the engine (fills the bundle volume): ${formatMs(firstStart)}`);
  printTable(
    ['figure', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio', 'goal', 'samples'],
    [
      [
        'cold start, agent-server brought in: POST -> RUNNING seen',
        formatMs(percentile(ours, 0.5)),
        formatMs(percentile(ours, 0.95)),
        formatMs(percentile(floor, 0.5)),
        formatMs(percentile(floor, 0.95)),
        formatRatio(percentile(ours, 0.5) / percentile(floor, 0.5)),
        '<= 1.15x',
        `${ours.length} + ${floor.length}`,
      ],
    ],
  );
}

/** `docker run` of the image with the bundle and a data volume mounted, as ours runs it, until /alive answers. */
async function floorRun(docker: Docker, instanceId: string, bundle: { volume: string; version: string }, round: number): Promise<number> {
  const began = Date.now();
  const dataVolume = `bench-images-floor-${instanceId}-${round}`;
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
          Runtime: RUNTIME,
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
    return Date.now() - began;
  } finally {
    await container.remove({ force: true, v: true });
    await docker.getVolume(dataVolume).remove().catch(() => undefined);
  }
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
