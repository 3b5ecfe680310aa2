import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LABEL_INSTANCE } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { buildE2eImage, E2E_IMAGE } from './harness.js';

const run = promisify(execFile);
const docker = await connectDocker();
const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * The control plane as compose.yaml runs it: its own image (the Dockerfile's
 * sandbox-server-from-host target: the default target builds the same from source, which needs the
 * npm registry), the engine's socket mounted, the host's network. It starts sandboxes and stops
 * gracefully on SIGTERM, leaving them running.
 */
describe.runIf(docker)('the control-plane image', () => {
  const engine = docker as Docker;
  const tag = `sandbox-server/control-plane:test-${randomBytes(4).toString('hex')}`;
  const instanceId = `image-${randomBytes(4).toString('hex')}`;
  const port = 20_000 + Math.floor(Math.random() * 10_000);
  let container: Docker.Container | undefined;

  beforeAll(async () => {
    await buildE2eImage();
    await run('docker', ['build', '-q', '--target', 'sandbox-server-from-host', '--build-arg', `BASE_IMAGE=${TEST_BASE_IMAGE}`, '-t', tag, ROOT]);
  }, 300_000);
  afterAll(async () => {
    await container?.remove({ force: true }).catch(() => undefined);
    await removeInstanceResources(engine, instanceId);
    await engine.getImage(tag).remove({ force: true }).catch(() => undefined);
  });

  it('runs from the image, starts a sandbox, and shuts down on SIGTERM leaving the sandbox running', async () => {
    container = await engine.createContainer({
      Image: tag,
      Env: [`PORT=${port}`, `AGENT_SERVER_IMAGE=${E2E_IMAGE}`, `SANDBOX_SERVER_INSTANCE=${instanceId}`, 'LOG_LEVEL=warn', 'SANDBOX_WARM_POOL=0'],
      HostConfig: { NetworkMode: 'host', Binds: ['/var/run/docker.sock:/var/run/docker.sock'] },
    });
    await container.start();
    const base = `http://127.0.0.1:${port}`;
    await vi.waitFor(async () => expect((await fetch(`${base}/health`)).status).toBe(200), { timeout: 60_000, interval: 200 });

    const sandbox = (await (await fetch(`${base}/api/v1/sandboxes`, { method: 'POST' })).json()) as { id: string };
    await vi.waitFor(
      async () => {
        const [info] = (await (await fetch(`${base}/api/v1/sandboxes?id=${sandbox.id}`)).json()) as { status: string }[];
        expect(info?.status).toBe('RUNNING');
      },
      { timeout: 60_000, interval: 200 },
    );

    await container.stop({ t: 20 });
    expect((await container.inspect()).State.ExitCode).toBe(0);
    const sandboxes = await engine.listContainers({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } });
    expect(sandboxes.map((c) => c.State)).toEqual(['running']);
    // Its waits (health, then RUNNING) may each take a minute on a loaded machine.
  }, 180_000);
});
