import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxEgressInfoSchema } from '../../../src/sandbox-server/models/egress-policy.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { testDrivers } from '../../helpers/database.js';
import { openTestApp, type TestApp } from '../harness.js';

describe.each(testDrivers)("a sandbox's egress policy through the API (%s)", (driver) => {
  let t: TestApp;
  let applied = 0;
  beforeAll(async () => {
    t = await openTestApp(driver, { applyEgress: async () => void applied++ });
  });
  afterAll(() => t.close());

  async function startOn(spec: Record<string, unknown>): Promise<string> {
    const created = await t.call('POST', '/api/v1/sandbox-specs', { image: 'img', ...spec }, SandboxSpecInfoSchema);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return (await t.call('POST', `/api/v1/sandboxes?sandbox_spec_id=${created.body.id}`, undefined, SandboxInfoSchema)).body.id;
  }

  it("shows the spec's policy, takes the sandbox's own with PATCH (in force before it answers), and goes back to the spec's with null", async () => {
    const id = await startOn({ id: 'listed', network: 'allowlist', egress: { allow: ['github.com'], deny: [] } });
    expect((await t.call('GET', `/api/v1/sandboxes/${id}/egress`, undefined, SandboxEgressInfoSchema)).body).toEqual({
      sandbox_id: id,
      network: 'allowlist',
      egress: { allow: ['github.com'], deny: [] },
      inherited: true,
    });
    const before = applied;
    const patched = await t.call('PATCH', `/api/v1/sandboxes/${id}`, { egress: { allow: ['*.PyPI.org', 'github.com'], deny: ['10.0.0.0/8'] } }, SandboxEgressInfoSchema);
    expect(patched.body).toEqual({ sandbox_id: id, network: 'allowlist', egress: { allow: ['*.pypi.org', 'github.com'], deny: ['10.0.0.0/8'] }, inherited: false });
    expect(applied).toBe(before + 1);
    expect((await t.call('GET', `/api/v1/sandboxes/${id}/egress`, undefined, SandboxEgressInfoSchema)).body.egress.allow).toEqual(['*.pypi.org', 'github.com']);
    const back = await t.call('PATCH', `/api/v1/sandboxes/${id}`, { egress: null }, SandboxEgressInfoSchema);
    expect(back.body).toMatchObject({ egress: { allow: ['github.com'], deny: [] }, inherited: true });
  });

  it('refuses bad entries, unknown fields, and a policy for a sandbox of another network with 422, changing nothing', async () => {
    const id = await startOn({ id: 'listed-2', network: 'allowlist', egress: { allow: ['github.com'], deny: [] } });
    const bad = await t.call('PATCH', `/api/v1/sandboxes/${id}`, { egress: { allow: ['github.com', 'https://x.example/'], deny: [] } }, ValidationErrorSchema);
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((issue) => issue.loc)).toEqual([['body', 'egress', 'allow', 1]]);
    expect((await t.call('PATCH', `/api/v1/sandboxes/${id}`, { network: 'internet' }, ValidationErrorSchema)).status).toBe(422);
    expect((await t.call('GET', `/api/v1/sandboxes/${id}/egress`, undefined, SandboxEgressInfoSchema)).body.inherited).toBe(true);
    const online = await startOn({ id: 'online', network: 'internet' });
    expect((await t.call('PATCH', `/api/v1/sandboxes/${online}`, { egress: { allow: ['github.com'], deny: [] } })).body).toEqual({
      detail: [{ loc: ['body', 'egress'], msg: 'applies to network "allowlist" only; this sandbox\'s network is "internet"', type: 'value_error' }],
    });
    expect((await t.call('GET', `/api/v1/sandboxes/${online}/egress`, undefined, SandboxEgressInfoSchema)).body).toEqual({
      sandbox_id: online,
      network: 'internet',
      egress: { allow: [], deny: [] },
      inherited: true,
    });
  });

  it('answers 404 for an unknown sandbox and 409 for a deleted one', async () => {
    expect(await t.call('PATCH', '/api/v1/sandboxes/nope', { egress: null })).toEqual({ status: 404, body: { detail: 'Sandbox not found' } });
    expect((await t.call('GET', '/api/v1/sandboxes/nope/egress')).status).toBe(404);
    const id = await startOn({ id: 'gone', network: 'allowlist' });
    expect((await t.call('DELETE', `/api/v1/sandboxes/${id}`)).status).toBe(200);
    expect(await t.call('PATCH', `/api/v1/sandboxes/${id}`, { egress: null })).toEqual({ status: 409, body: { detail: 'Sandbox has been deleted' } });
  });
});
