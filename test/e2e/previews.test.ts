import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { AGENT_SERVER_CONTAINER_PORT } from '../../src/contracts/sandbox.js';
import { PreviewTokenSchema } from '../../src/sandbox-server/models/sandbox-port.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { spawnSandboxctl } from '../cli/binary.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const APP_PORT = 5173;
const TCP_PORT = 7000;
const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].find((path): path is string => path !== undefined && existsSync(path));
if (docker && chromiumPath === undefined && process.env.CI !== 'true') {
  console.warn('\n*** test/e2e/previews.test.ts: chromium not found (apt-get install chromium): the browser checks fail ***\n');
}

/**
 * Preview URLs end to end: an app started in a real sandbox, reached through the control plane in
 * path mode and host mode (PREVIEW_DOMAIN=localhost, which Chromium resolves to loopback by
 * itself), by headless Chromium holding a preview link and no API key; and sandboxctl port-forward.
 */
describe.runIf(docker)('preview URLs', () => {
  let cp: E2eControlPlane;
  let browser: Browser;
  let sandboxId: string;
  const engine = docker as Docker;

  beforeAll(async () => {
    await buildE2eImage();
    cp = await startE2eControlPlane({ PREVIEW_DOMAIN: 'localhost' });
    const spec = await cp.request('POST', '/api/v1/sandbox-specs', {
      id: `preview-${cp.instanceId}`,
      image: E2E_IMAGE,
      exposed_ports: [
        { name: 'AGENT_SERVER', container_port: AGENT_SERVER_CONTAINER_PORT },
        { name: 'WORKER_1', container_port: APP_PORT },
      ],
    }, SandboxSpecInfoSchema);
    expect(spec.status, JSON.stringify(spec.body)).toBe(201);
    const started = await cp.request('POST', `/api/v1/sandboxes?sandbox_spec_id=${spec.body.id}`, undefined, SandboxInfoSchema);
    sandboxId = started.body.id;
    await cp.sandboxUntil(sandboxId, 'RUNNING');
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  const preview = (path = '') => `${cp.url}/api/v1/sandboxes/${sandboxId}/ports/${APP_PORT}/${path}`;
  const withKey = (init: RequestInit = {}) => ({ ...init, headers: { authorization: `Bearer ${cp.apiKey}`, ...init.headers } });
  const bash = async (command: string) =>
    (await cp.request('POST', `/api/v1/sandboxes/${sandboxId}/agent/api/bash/execute_bash_command`, { command, timeout: 30 }, BashOutputSchema)).body;
  const token = async (expiresIn?: number) =>
    (await cp.request('POST', `/api/v1/sandboxes/${sandboxId}/ports/${APP_PORT}/token`, expiresIn === undefined ? undefined : { expires_in: expiresIn }, PreviewTokenSchema)).body;

  it('answers 502 while nothing listens, as JSON for programs and as a page for browsers', async () => {
    const json = await fetch(preview(), withKey());
    expect(json.status).toBe(502);
    expect(((await json.json()) as { detail: string }).detail).toContain(`Nothing answers on port ${APP_PORT} in the sandbox`);
    const page = await fetch(preview(), withKey({ headers: { accept: 'text/html,application/xhtml+xml' } }));
    expect(page.status).toBe(502);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain(`Nothing on port ${APP_PORT} yet`);
  });

  it('forwards HTTP, streams and the app-facing headers in path mode with the API key, and refuses a caller without one', async () => {
    const app = await readFile(join(import.meta.dirname, 'fixtures', 'preview-app.cjs'), 'utf8');
    const upload = new FormData();
    upload.append('file', new Blob([app]), 'app.cjs');
    const uploaded = await fetch(`${cp.url}/api/v1/sandboxes/${sandboxId}/agent/api/file/upload?path=/tmp/app.cjs`, withKey({ method: 'POST', body: upload }));
    expect(uploaded.status).toBe(200);
    expect((await bash(`setsid nohup node /tmp/app.cjs ${APP_PORT} ${TCP_PORT} > /tmp/app.log 2>&1 & echo started`)).stdout).toContain('started');
    await vi.waitFor(async () => expect((await fetch(preview(), withKey())).status).toBe(200), { timeout: 20_000, interval: 200 });

    const hello = await fetch(preview('api/hello'), withKey({ method: 'POST', body: 'posted', headers: { cookie: 'theirs=1' } }));
    expect(await hello.json()).toEqual({ hello: 'posted', prefix: `/api/v1/sandboxes/${sandboxId}/ports/${APP_PORT}`, cookie: 'theirs=1', authorization: null, key: null });
    const byName = await fetch(`${cp.url}/api/v1/sandboxes/${sandboxId}/ports/WORKER_1/api/hello`, withKey({ method: 'POST', body: 'named' }));
    expect(((await byName.json()) as { hello: string }).hello).toBe('named');
    expect(await (await fetch(preview('stream'), withKey())).text()).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
    const bare = await fetch(`${cp.url}/api/v1/sandboxes/${sandboxId}/ports/${APP_PORT}`, withKey({ redirect: 'manual' }));
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe(`/api/v1/sandboxes/${sandboxId}/ports/${APP_PORT}/`);

    const anonymous = await fetch(preview());
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { detail: string }).detail).toContain('preview link');
    const ports = await cp.request('GET', `/api/v1/sandboxes/${sandboxId}/ports`);
    expect(ports.body).toEqual([
      { name: 'WORKER_1', port: APP_PORT, public: false, url: preview(), host_url: `http://${APP_PORT}-${sandboxId}.localhost:${new URL(cp.url).port}/` },
    ]);
  });

  it('opens the app in Chromium from a preview link, in path mode and in host mode: the page, its fetch and its WebSocket', async () => {
    const link = await token();
    for (const url of [link.url, link.host_url!]) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const opened = await page.goto(url);
      expect(opened?.status(), url).toBe(200);
      // The token went into an HttpOnly cookie, and out of the address bar.
      expect(page.url()).not.toContain('preview_token');
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: 'sandbox_preview', httpOnly: true, sameSite: 'Lax' });
      await page.click('#go');
      await expect.poll(() => page.textContent('#fetched'), { timeout: 10_000 }).toContain('"hello":"from the page"');
      // The app never sees the preview cookie.
      expect(await page.textContent('#fetched')).toContain('"cookie":null');
      await expect.poll(() => page.textContent('#socket'), { timeout: 10_000 }).toBe('pong to ping at /ws');
      await context.close();
    }
  });

  it('refuses an expired link and every link after a revocation, with a page a person can read', async () => {
    const short = await token(1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const expired = await fetch(short.url, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(expired.status).toBe(401);
    expect(await expired.text()).toContain('expired or was revoked');

    const link = await token();
    const context = await browser.newContext();
    const page = await context.newPage();
    expect((await page.goto(link.url))?.status()).toBe(200);
    expect((await cp.request('DELETE', `/api/v1/sandboxes/${sandboxId}/preview-tokens`)).status).toBe(200);
    expect((await page.reload())?.status()).toBe(401);
    expect((await fetch(link.url, { redirect: 'manual' })).status).toBe(401);
    await context.close();
  });

  it('wakes a paused sandbox for a page request', async () => {
    expect((await cp.request('POST', `/api/v1/sandboxes/${sandboxId}/pause`)).status).toBe(200);
    await cp.sandboxUntil(sandboxId, 'PAUSED');
    const link = await token();
    const context = await browser.newContext();
    const page = await context.newPage();
    expect((await page.goto(link.url, { timeout: 60_000 }))?.status()).toBe(200);
    expect(await page.textContent('#go')).toBe('go');
    await context.close();
    await cp.sandboxUntil(sandboxId, 'RUNNING');
    // The app was paused with its sandbox, not stopped: it still answers.
    expect((await fetch(preview(), withKey())).status).toBe(200);
  });

  it('carries a TCP conversation through sandboxctl port-forward', async () => {
    const forward = spawnSandboxctl(['port-forward', sandboxId, `0:${TCP_PORT}`], { env: { SANDBOX_SERVER_URL: cp.url, SANDBOX_SERVER_API_KEY: cp.apiKey } });
    try {
      const localPort = await new Promise<number>((resolve, reject) => {
        let stderr = '';
        forward.stderr.on('data', (chunk: string) => {
          stderr += chunk;
          const match = /127\.0\.0\.1:(\d+)/.exec(stderr);
          if (match) resolve(Number(match[1]));
        });
        forward.once('exit', (code) => reject(new Error(`port-forward exited ${code}: ${stderr}`)));
      });
      const socket = connect({ host: '127.0.0.1', port: localPort });
      const lines: string[] = [];
      socket.setEncoding('utf8').on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
      socket.write('hello\n');
      await vi.waitFor(() => expect(lines).toEqual(['HELLO']), { timeout: 10_000 });
      socket.write('over a websocket\n');
      await vi.waitFor(() => expect(lines).toEqual(['HELLO', 'OVER A WEBSOCKET']), { timeout: 10_000 });
      socket.end();
    } finally {
      forward.kill('SIGINT');
    }
  });
});
