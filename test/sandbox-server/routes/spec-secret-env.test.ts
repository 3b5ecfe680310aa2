import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SandboxSpecInfoSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { sandboxes, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { brokeredSecretsOf } from '../../../src/sandbox-server/broker/sandbox-secrets.js';
import { containerRequestFor } from '../../../src/sandbox-server/reconciler/index.js';
import { eq } from 'drizzle-orm';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { testDrivers } from '../../helpers/database.js';
import { openTestApp, type TestApp } from '../harness.js';

/** A spec's initial_env entries marked secret are write-only: stored and used, never answered. */
describe.each(testDrivers)('secret initial_env (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver);
  });
  afterAll(() => t.close());
  beforeEach(() => t.reset());

  it('answers the secret entries masked wherever the spec is shown, and keeps their values for the containers', async () => {
    const created = await t.call(
      'POST',
      '/api/v1/sandbox-specs',
      { id: 'with-secret', image: 'busybox', initial_env: { MODE: 'test', API_TOKEN: 'tok-9f2e71c0' }, secret_env: ['API_TOKEN'] },
      SandboxSpecInfoSchema,
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ initial_env: { MODE: 'test', API_TOKEN: '**********' }, secret_env: ['API_TOKEN'] });
    const listed = await t.call('GET', '/api/v1/sandbox-specs?id=with-secret', undefined, z.array(SandboxSpecInfoSchema.nullable()));
    expect(listed.body[0]?.initial_env).toEqual({ MODE: 'test', API_TOKEN: '**********' });
    const search = await t.call('GET', '/api/v1/sandbox-specs/search');
    expect(JSON.stringify(search.body)).not.toContain('tok-9f2e71c0');
  });

  it('refuses a secret_env name that is not in initial_env with a 422', async () => {
    const answer = await t.call('POST', '/api/v1/sandbox-specs', { image: 'busybox', initial_env: { A: 'x' }, secret_env: ['A', 'B'] }, ValidationErrorSchema);
    expect(answer.status).toBe(422);
    expect(answer.body.detail.map((item) => item.loc)).toEqual([['body', 'secret_env', 1]]);
  });

  it('brokers a secret with hosts: shown with its hosts, its container given a placeholder, the proxy the value', async () => {
    const created = await t.call(
      'POST',
      '/api/v1/sandbox-specs',
      {
        id: 'brokered',
        image: 'busybox',
        network: 'allowlist',
        egress: { allow: ['github.com'], deny: [] },
        initial_env: { MODE: 'test', GITHUB_TOKEN: 'ghp_brokered_4d1e' },
        secret_env: ['GITHUB_TOKEN'],
        secret_hosts: { GITHUB_TOKEN: ['github.com', '*.github.com'] },
      },
      SandboxSpecInfoSchema,
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ initial_env: { GITHUB_TOKEN: '**********' }, secret_hosts: { GITHUB_TOKEN: ['github.com', '*.github.com'] } });
    const sandbox = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'brokered' }, SandboxInfoSchema);
    expect(sandbox.status).toBe(200);
    const [row] = await t.handle.db.select().from(sandboxes).where(eq(sandboxes.id, sandbox.body.id));
    const [spec] = await t.handle.db.select().from(sandboxSpecs).where(eq(sandboxSpecs.id, 'brokered'));
    const request = containerRequestFor(row!, spec!, '/data');
    expect(request.initialEnv.MODE).toBe('test');
    expect(request.initialEnv.GITHUB_TOKEN).toMatch(/^sbx_brokered_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(request)).not.toContain('ghp_brokered_4d1e');
    expect(await brokeredSecretsOf(t.handle.db, sandbox.body.id)).toEqual([
      { name: 'GITHUB_TOKEN', placeholder: request.initialEnv.GITHUB_TOKEN, value: 'ghp_brokered_4d1e', hosts: ['github.com', '*.github.com'] },
    ]);
    await t.call('DELETE', `/api/v1/sandboxes/${sandbox.body.id}`);
    expect(await brokeredSecretsOf(t.handle.db, sandbox.body.id)).toEqual([]);
  });

  it('refuses secret_hosts naming no secret_env entry, a host that is a URL, and a value no header can carry, with 422s', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const answer = await t.call('POST', '/api/v1/sandbox-specs', { image: 'busybox', network: 'allowlist', ...body }, ValidationErrorSchema);
      expect(answer.status).toBe(422);
      return answer.body.detail.map((item) => item.loc);
    };
    expect(await refused({ initial_env: { A: 'x' }, secret_hosts: { A: ['github.com'] } })).toEqual([['body', 'secret_hosts', 'A']]);
    expect(await refused({ network: 'internet', initial_env: { A: 'x' }, secret_env: ['A'], secret_hosts: { A: ['github.com'] } })).toEqual([['body', 'secret_hosts', 'A']]);
    expect(await refused({ initial_env: { A: 'x' }, secret_env: ['A'], secret_hosts: { A: ['https://github.com', 'github.com:443', '*', 'ok.example'] } })).toEqual([
      ['body', 'secret_hosts', 'A', 0],
      ['body', 'secret_hosts', 'A', 1],
      ['body', 'secret_hosts', 'A', 2],
    ]);
    expect(await refused({ initial_env: { A: 'x' }, secret_env: ['A'], secret_hosts: { A: [] } })).toEqual([['body', 'secret_hosts', 'A']]);
    expect(await refused({ initial_env: { A: 'line\r\nX-Injected: 1' }, secret_env: ['A'], secret_hosts: { A: ['github.com'] } })).toEqual([['body', 'initial_env', 'A']]);
  });
});
