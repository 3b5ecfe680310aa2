import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SandboxSpecInfoSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
import { SettingsSchema } from '../../../src/sandbox-server/models/settings.js';
import { ErrorDetailSchema, ValidationErrorSchema } from '../../helpers/answer.js';
import { testDrivers } from '../../helpers/database.js';
import { ADMIN_KEY, DEFAULT_IMAGE, openTestApp, type TestApp } from '../harness.js';

const SEEDED = {
  warm_pool_size: 0,
  default_memory_mb: 2048,
  default_pids_limit: 512,
  default_cpus: 1,
  default_disk_mb: 10_240,
  default_runtime: 'runc',
  updated_at: expect.stringMatching(/Z$/),
};

describe.each(testDrivers)('shared settings routes (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    const reset = { warm_pool_size: 0, default_memory_mb: 2048, default_pids_limit: 512, default_cpus: 1, default_disk_mb: 10_240, default_runtime: 'runc' };
    expect((await t.callAs(ADMIN_KEY, 'PATCH', '/api/v1/settings', reset)).status).toBe(200);
  });

  const defaultSpec = async () => {
    const [spec] = (await t.call('GET', `/api/v1/sandbox-specs?id=${encodeURIComponent(DEFAULT_IMAGE)}`, undefined, z.array(SandboxSpecInfoSchema.nullable()))).body;
    return spec;
  };

  it('answers the settings the database holds, to any key', async () => {
    expect(await t.call('GET', '/api/v1/settings', undefined, SettingsSchema)).toEqual({ status: 200, body: SEEDED });
  });

  it('changes them for the default spec and for specs created after, and keeps the fields left out', async () => {
    const changed = await t.callAs(ADMIN_KEY, 'PATCH', '/api/v1/settings', { warm_pool_size: 3, default_memory_mb: 512, default_cpus: 0.5, default_runtime: 'runsc' }, SettingsSchema);
    expect(changed).toEqual({
      status: 200,
      body: { ...SEEDED, warm_pool_size: 3, default_memory_mb: 512, default_cpus: 0.5, default_runtime: 'runsc' },
    });
    expect((await t.call('GET', '/api/v1/settings', undefined, SettingsSchema)).body).toEqual(changed.body);
    expect(await defaultSpec()).toMatchObject({ warm_pool_size: 3, memory_mb: 512, cpus: 0.5, pids_limit: 512, disk_mb: 10_240, runtime: 'runsc' });
    const created = await t.call('POST', '/api/v1/sandbox-specs', { id: 'plain', image: 'img' }, SandboxSpecInfoSchema);
    expect(created.body).toMatchObject({ memory_mb: 512, cpus: 0.5, pids_limit: 512, runtime: 'runsc', warm_pool_size: 0 });
  });

  it('lets only admin keys change them (403), and refuses bad values and unknown fields with 422', async () => {
    expect(await t.call('PATCH', '/api/v1/settings', { warm_pool_size: 5 }, ErrorDetailSchema)).toEqual({
      status: 403,
      body: { detail: 'Changing the shared settings needs an admin key (SANDBOX_SERVER_ADMIN_KEYS)' },
    });
    const negative = await t.callAs(ADMIN_KEY, 'PATCH', '/api/v1/settings', { warm_pool_size: -1 }, ValidationErrorSchema);
    expect(negative.status).toBe(422);
    expect(negative.body.detail[0]).toMatchObject({ loc: ['body', 'warm_pool_size'], type: 'greater_than_equal' });
    const unknown = await t.callAs(ADMIN_KEY, 'PATCH', '/api/v1/settings', { max_running_sandboxes: 3 }, ValidationErrorSchema);
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]?.loc).toEqual(['body', 'max_running_sandboxes']);
    const runtime = await t.callAs(ADMIN_KEY, 'PATCH', '/api/v1/settings', { default_runtime: 'kata' }, ValidationErrorSchema);
    expect(runtime.body.detail[0]).toMatchObject({ loc: ['body', 'default_runtime'], type: 'enum' });
    expect((await t.call('GET', '/api/v1/settings', undefined, SettingsSchema)).body).toEqual(SEEDED);
    expect((await defaultSpec())?.warm_pool_size).toBe(0);
  });

  it('refuses a runtime that failed its self-test, as a spec naming it is refused', async () => {
    const failing = await openTestApp(driver, { runtimes: { available: ['runc', 'runsc'], failed: new Map([['runsc', 'ls: Invalid argument']]) } });
    try {
      const refused = await failing.callAs(ADMIN_KEY, 'PATCH', '/api/v1/settings', { default_runtime: 'runsc' }, ValidationErrorSchema);
      expect(refused.status).toBe(422);
      expect(refused.body.detail[0]).toMatchObject({ loc: ['body', 'default_runtime'], msg: expect.stringContaining('runsc failed its self-test on the Docker engine: ls: Invalid argument') });
      // auto settles for runc there, as a start would.
      expect((await failing.callAs(ADMIN_KEY, 'PATCH', '/api/v1/settings', { default_runtime: 'auto' }, SettingsSchema)).body.default_runtime).toBe('auto');
      expect((await failing.call('POST', '/api/v1/sandbox-specs', { id: 'plain', image: 'img' }, SandboxSpecInfoSchema)).body.runtime).toBe('runc');
    } finally {
      await failing.close();
    }
  }, 120_000);
});
