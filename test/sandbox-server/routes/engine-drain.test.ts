import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engines, sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { EngineInfoSchema, EnginePageSchema } from '../../../src/sandbox-server/models/engine.js';
import { LifecycleEventPageSchema } from '../../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
import { testDrivers } from '../../helpers/database.js';
import { API_KEY, openTestApp, type TestApp } from '../harness.js';

const E1 = { name: 'e1', docker_url: 'unix:///var/run/docker-e1.sock', advertise_host: '127.0.0.2' };

/** The drain's intent and progress through the API; the moves themselves are test/e2e/drain.test.ts's. */
describe.each(testDrivers)('POST /api/v1/engines/{name}/drain (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver, { adminKeys: [API_KEY] });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
  });

  it('sets the engine DRAINING with engine.draining, places nothing more on it, and reports what remains and what stays', async () => {
    expect((await t.call('POST', '/api/v1/sandbox-specs', { id: 'pinned', image: 'x', movable: false }, SandboxSpecInfoSchema)).body.movable).toBe(false);
    expect((await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body.engine).toBe('local');
    expect((await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'pinned' }, SandboxInfoSchema)).body.engine).toBe('local');
    expect((await t.call('POST', '/api/v1/engines', E1)).status).toBe(201);
    // A warm-pool member of the pinned spec is live there too, but a drain retires it rather than waiting for it.
    await t.handle.db.insert(sandboxes).values({ id: 'member', specId: 'pinned', engine: 'local', desiredState: 'RUNNING', status: 'RUNNING', sessionApiKey: 'k', poolFingerprint: 'f' });

    const { status, body } = await t.call('POST', '/api/v1/engines/local/drain', undefined, EngineInfoSchema);
    expect(status).toBe(200);
    expect(body).toMatchObject({ state: 'DRAINING', sandboxes: 3, drain: { moved: 0, remaining: 2, staying: 1 } });
    expect((await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body.engine).toBe('e1');

    // A move counts in the engine's row (engines/move-sandbox.ts); GET shows it.
    await t.handle.db.update(engines).set({ movedSandboxes: 3 }).where(eq(engines.name, 'local'));
    expect((await t.call('GET', '/api/v1/engines?name=local', undefined, EnginePageSchema)).body.items[0]?.drain).toEqual({ moved: 3, remaining: 2, staying: 1 });

    // Asking again changes nothing; uncordoning ends the drain.
    expect((await t.call('POST', '/api/v1/engines/local/drain', undefined, EngineInfoSchema)).body.state).toBe('DRAINING');
    expect(await t.call('POST', '/api/v1/engines/local/uncordon')).toEqual({ status: 200, body: expect.objectContaining({ state: 'ACTIVE', drain: null }) });
    const events = (await t.call('GET', '/api/v1/events/search?limit=100&sort_order=TIMESTAMP', undefined, LifecycleEventPageSchema)).body.items.filter(
      (event) => event.subject_kind === 'engine' && event.subject_id === 'local',
    );
    expect(events.map((event) => [event.type, event.previous_status, event.status])).toEqual([
      ['engine.draining', 'ACTIVE', 'DRAINING'],
      ['engine.uncordoned', 'DRAINING', 'ACTIVE'],
    ]);
  });

  it('drains a cordoned engine too, and answers 404 for an unknown one', async () => {
    expect((await t.call('POST', '/api/v1/engines/local/cordon', undefined, EngineInfoSchema)).body.state).toBe('CORDONED');
    expect((await t.call('POST', '/api/v1/engines/local/drain', undefined, EngineInfoSchema)).body).toMatchObject({ state: 'DRAINING', drain: { moved: 0, remaining: 0, staying: 0 } });
    expect(await t.call('POST', '/api/v1/engines/nope/drain')).toEqual({ status: 404, body: { detail: 'Engine not found' } });
  });
});
