import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PreviewTokenSchema } from '../../../src/sandbox-server/models/sandbox-port.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
import { API_KEY, openTestApp, type TestApp } from '../harness.js';

/** Preview links and the access checks of preview URLs, with no engine: the sandbox is never RUNNING here. */
describe('sandbox ports (no engine)', () => {
  let t: TestApp;
  let sandboxId: string;

  beforeAll(async () => {
    t = await openTestApp('pglite', { previewDomain: 'preview.localhost' });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    const spec = await t.call('POST', '/api/v1/sandbox-specs', {
      id: 'web',
      image: 'img',
      resume_on_access: false,
      exposed_ports: [
        { name: 'AGENT_SERVER', container_port: 8000 },
        { name: 'WORKER_1', container_port: 5173 },
        { name: 'DOCS', container_port: 8080, public: true },
      ],
    }, SandboxSpecInfoSchema);
    expect(spec.status).toBe(201);
    sandboxId = (await t.call('POST', '/api/v1/sandboxes?sandbox_spec_id=web', undefined, SandboxInfoSchema)).body.id;
  });

  it('lists the exposed ports but the agent-server\'s, with their preview URLs in both modes', async () => {
    const { status, body } = await t.call('GET', `/api/v1/sandboxes/${sandboxId}/ports`);
    expect(status).toBe(200);
    expect(body).toEqual([
      { name: 'WORKER_1', port: 5173, public: false, url: `http://localhost/api/v1/sandboxes/${sandboxId}/ports/5173/`, host_url: `http://5173-${sandboxId}.preview.localhost/` },
      { name: 'DOCS', port: 8080, public: true, url: `http://localhost/api/v1/sandboxes/${sandboxId}/ports/8080/`, host_url: `http://8080-${sandboxId}.preview.localhost/` },
    ]);
  });

  it('makes preview links by number or name, bounded in time, and refuses bad input', async () => {
    const byName = await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/WORKER_1/token`, { expires_in: 120 }, PreviewTokenSchema);
    expect(byName.status).toBe(200);
    expect(byName.body).toMatchObject({ sandbox_id: sandboxId, port: 5173 });
    expect(byName.body.url).toBe(`http://localhost/api/v1/sandboxes/${sandboxId}/ports/5173/?preview_token=${byName.body.token}`);
    expect(byName.body.host_url).toBe(`http://5173-${sandboxId}.preview.localhost/?preview_token=${byName.body.token}`);
    expect(Date.parse(byName.body.expires_at) - Date.now()).toBeGreaterThan(100_000);
    const noBody = await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/3000/token`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` } });
    expect(noBody.status).toBe(200);
    expect(((await noBody.json()) as { port: number }).port).toBe(3000);
    expect((await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/5173/token`, { expires_in: 0 })).status).toBe(422);
    expect((await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/5173/token`, { expires_in: 700_000 })).status).toBe(422);
    expect((await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/70000/token`)).status).toBe(404);
    expect((await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/NOPE/token`)).status).toBe(404);
    expect((await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/x.y/token`)).status).toBe(422);
    expect((await t.call('POST', '/api/v1/sandboxes/nope/ports/5173/token')).status).toBe(404);
    expect((await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/5173/token`, { method: 'POST' })).status).toBe(401);
  });

  it('lets no one without a key, link or public port past the door, in either mode, and tells a browser in a page', async () => {
    const anonymous = await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/5173/`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { detail: string }).detail).toContain('preview link');
    const browser = await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/5173/`, { headers: { accept: 'text/html,*/*' } });
    expect(browser.status).toBe(401);
    expect(await browser.text()).toContain('<title>This preview needs a key or a fresh link</title>');
    const hostMode = await t.app.request('/', { headers: { host: `5173-${sandboxId}.preview.localhost` } });
    expect(hostMode.status).toBe(401);
    const forged = await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/5173/`, { headers: { cookie: 'sandbox_preview=v1.99999999999.AAAA' } });
    expect(forged.status).toBe(401);
    const badLink = await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/5173/?preview_token=v1.1.AAAA`);
    expect(badLink.status).toBe(401);
    expect(((await badLink.json()) as { detail: string }).detail).toContain('expired or was revoked');
  });

  it('trades a link for a cookie scoped to the sandbox port, then lets it through to the (here absent) agent-server', async () => {
    const link = (await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/5173/token`, undefined, PreviewTokenSchema)).body;
    const traded = await t.app.request(new URL(link.url).pathname + new URL(link.url).search, { redirect: 'manual' });
    expect(traded.status).toBe(303);
    expect(traded.headers.get('location')).toBe(`/api/v1/sandboxes/${sandboxId}/ports/5173/`);
    const cookie = traded.headers.get('set-cookie')!;
    expect(cookie).toMatch(new RegExp(`^sandbox_preview=${link.token.replace(/\./g, '\\.')}; Path=/api/v1/sandboxes/${sandboxId}/ports/5173; Max-Age=\\d+; HttpOnly; SameSite=Lax$`));
    // Past the door to the sandbox itself: paused, with a spec that does not resume on access.
    expect((await t.call('POST', `/api/v1/sandboxes/${sandboxId}/pause`)).status).toBe(200);
    const withCookie = await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/5173/`, { headers: { cookie: `other=1; sandbox_preview=${link.token}` } });
    expect(withCookie.status).toBe(409);
    expect((await t.call('DELETE', `/api/v1/sandboxes/${sandboxId}/preview-tokens`)).status).toBe(200);
    const revoked = await t.app.request(`/api/v1/sandboxes/${sandboxId}/ports/5173/`, { headers: { cookie: `sandbox_preview=${link.token}` } });
    expect(revoked.status).toBe(401);
  });
});
