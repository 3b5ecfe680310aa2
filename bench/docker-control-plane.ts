/**
 * The real control plane (startSandboxServer on PGlite, the Docker runtime, no warm pool) the Docker
 * benches start sandboxes through, on the bench image of buildBenchImage and one OCI runtime, with
 * what every such bench needs of it: its API, its `sandbox.running` events, and the removal of a
 * bench's sandboxes down to their containers.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import { loadConfig } from '../src/sandbox-server/config.js';
import { LABEL_SANDBOX_ID } from '../src/sandbox-server/runtime/index.js';
import { startSandboxServer } from '../src/sandbox-server/server.js';
import { type BenchImage, controlPlaneApi, waitFor } from './docker-fixture.js';
import { until } from './measure.js';
import { containerPhases, type Phases } from './phases.js';
import { followRunningEvents, type RunningEvents } from './running-events.js';

const TIMEOUT_MS = 180_000;

export interface DockerControlPlane {
  url: string;
  api: ReturnType<typeof controlPlaneApi>;
  running: RunningEvents;
  /** Deletes the sandboxes and waits until their containers are gone. */
  removeOurs(ids: string[]): Promise<void>;
  /** Where a sandbox's start spent its time (phases.ts), from `began` to `done` (epoch ms). */
  phasesOf(sandboxId: string, began: number, done: number): Promise<Phases>;
  close(): Promise<void>;
}

/** `env` adds to or overrides the settings (MAX_RUNNING_SANDBOXES for a burst, say). */
export async function startDockerControlPlane(docker: Docker, bench: BenchImage, runtime: string, env: Record<string, string> = {}): Promise<DockerControlPlane> {
  const dataDir = await mkdtemp(join(tmpdir(), `${bench.instanceId}-`));
  const server = await startSandboxServer(
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      AGENT_SERVER_IMAGE: bench.image,
      SANDBOX_BASE_IMAGE: bench.baseImage,
      SANDBOX_SERVER_INSTANCE: bench.instanceId,
      SANDBOX_RUNTIME: runtime,
      SANDBOX_WARM_POOL: '0',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      ...env,
    }),
  );
  const api = controlPlaneApi(server.url);
  const running = await followRunningEvents(server.url);
  return {
    url: server.url,
    api,
    running,
    async removeOurs(ids) {
      await Promise.all(ids.map((id) => api(z.unknown(), 'DELETE', `/api/v1/sandboxes/${id}`)));
      for (const id of ids) await until(async () => (await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${id}`] } })).length === 0, waitFor(TIMEOUT_MS));
    },
    async phasesOf(sandboxId, began, done) {
      const [listed] = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
      if (!listed) throw new Error(`no container for ${sandboxId}`);
      return containerPhases(docker.getContainer(listed.Id), began, done);
    },
    async close() {
      running.stop();
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
