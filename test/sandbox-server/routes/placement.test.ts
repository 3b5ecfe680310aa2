import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engines, sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { ErrorDetailSchema } from '../../helpers/answer.js';
import { testDrivers } from '../../helpers/database.js';
import { openTestApp, type TestApp } from '../harness.js';

/** Placement through POST /api/v1/sandboxes: which engine a new sandbox lands on, and the 503 when none fits. */
describe.each(testDrivers)('sandbox placement (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
  });

  async function addEngine(name: string, values: Partial<typeof engines.$inferInsert> = {}): Promise<void> {
    await t.handle.db.insert(engines).values({ name, dockerUrl: `unix:///var/run/${name}.sock`, advertiseHost: '127.0.0.9', ...values });
  }

  function start(body: object = {}) {
    return t.call('POST', '/api/v1/sandboxes', body, SandboxInfoSchema);
  }

  function refusedStart(body: object = {}) {
    return t.call('POST', '/api/v1/sandboxes', body, ErrorDetailSchema);
  }

  it('spreads sandboxes over the engines, least loaded first, and shows each one\'s engine', async () => {
    await addEngine('e1');
    await addEngine('e2');
    const placed: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { status, body } = await start();
      expect(status).toBe(200);
      placed.push(body.engine);
      const [row] = await t.handle.db.select({ engine: sandboxes.engine }).from(sandboxes).where(eq(sandboxes.id, body.id));
      expect(row?.engine).toBe(body.engine);
    }
    expect(placed.sort()).toEqual(['e1', 'e1', 'e2', 'e2', 'local', 'local']);
  });

  it('places a spec\'s sandboxes only on engines carrying its engine labels, and answers 503 saying why when none does', async () => {
    await addEngine('gpu', { labels: { gpu: 'yes', zone: 'a' } });
    expect((await t.call('POST', '/api/v1/sandbox-specs', { id: 'needs-gpu', image: 'x', engine_labels: { gpu: 'yes' } })).status).toBe(201);
    expect((await t.call('POST', '/api/v1/sandbox-specs', { id: 'needs-tpu', image: 'x', engine_labels: { tpu: 'yes' } })).status).toBe(201);

    for (let i = 0; i < 3; i++) expect((await start({ sandbox_spec_id: 'needs-gpu' })).body.engine).toBe('gpu');

    const refused = await refusedStart({ sandbox_spec_id: 'needs-tpu' });
    expect(refused).toEqual({
      status: 503,
      body: { detail: 'no engine can take a new sandbox: gpu lacks the label tpu=yes; local lacks the label tpu=yes' },
    });
    expect(await t.handle.db.select().from(sandboxes).where(eq(sandboxes.specId, 'needs-tpu'))).toEqual([]);
  });

  it('places nothing on a cordoned, draining or full engine, and on an unreachable one only when nothing else fits', async () => {
    await addEngine('cordoned', { state: 'CORDONED' });
    await addEngine('draining', { state: 'DRAINING' });
    await addEngine('down', { health: 'UNREACHABLE', maxSandboxes: 1 });
    await t.handle.db.update(engines).set({ maxSandboxes: 2 }).where(eq(engines.name, 'local'));
    expect((await start()).body.engine).toBe('local');
    expect((await start()).body.engine).toBe('local');
    expect((await start()).body.engine).toBe('down');
    expect(await refusedStart()).toEqual({
      status: 503,
      body: { detail: 'no engine can take a new sandbox: cordoned is cordoned; down is full (1/1); draining is draining; local is full (2/2)' },
    });
  });

  it('never overfills an engine under concurrent starts', async () => {
    await t.handle.db.update(engines).set({ maxSandboxes: 5 }).where(eq(engines.name, 'local'));
    const answers = await Promise.all(Array.from({ length: 12 }, () => t.call('POST', '/api/v1/sandboxes', {})));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 503)).toHaveLength(7);
    expect(await t.handle.db.select().from(sandboxes)).toHaveLength(5);
  });
});
