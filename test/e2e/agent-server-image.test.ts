import { randomBytes } from 'node:crypto';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker } from '../helpers/docker.js';
import { buildE2eImage, E2E_IMAGE } from './harness.js';

const docker = await connectDocker();
const KEY = `image-key-${randomBytes(8).toString('hex')}`;

/** The agent-server image on its own, as testcontainers runs it: what a sandbox serves. */
describe.runIf(docker)('the agent-server image', () => {
  let container: StartedTestContainer;
  let base: string;

  beforeAll(async () => {
    await buildE2eImage();
    container = await new GenericContainer(E2E_IMAGE)
      .withEnvironment({ OH_SESSION_API_KEYS_0: KEY, LOG_LEVEL: 'warn' })
      .withExposedPorts(8000)
      // A container that died says why (its last log lines) instead of timing out.
      .withWaitStrategy(Wait.forHttp('/alive', 8000, { abortOnContainerExit: true }).forStatusCode(200))
      .start();
    base = `http://127.0.0.1:${container.getMappedPort(8000)}`;
  }, 180_000);
  afterAll(async () => {
    await container?.stop();
  });

  it('requires its session key everywhere but /alive and /health', async () => {
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect((await fetch(`${base}/api/conversations/count`)).status).toBe(401);
    const count = await fetch(`${base}/api/conversations/count`, { headers: { 'X-Session-API-Key': KEY } });
    expect(await count.json()).toBe(0);
  });

  it('serves its API reference and metrics from the files inside the image', async () => {
    const headers = { 'X-Session-API-Key': KEY };
    const page = await fetch(`${base}/docs`, { headers });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    const bundle = await fetch(`${base}/docs/assets/swagger-ui-bundle.js`, { headers });
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const metrics = await fetch(`${base}/metrics`, { headers });
    expect(await metrics.text()).toMatch(/^http_requests_total\{/m);
  });

  it("runs the agent's commands as an unprivileged user in /workspace, apart from the agent-server", async () => {
    const response = await fetch(`${base}/api/bash/execute_bash_command`, {
      method: 'POST',
      headers: { 'X-Session-API-Key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'id -un && pwd && stat -c %U /proc/1' }),
    });
    expect(((await response.json()) as { stdout: string }).stdout.trim().split('\n')).toEqual(['openhands', '/workspace', 'root']);
  });
});
