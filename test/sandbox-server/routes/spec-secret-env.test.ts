import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SandboxSpecInfoSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
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
});
