import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { testDrivers } from '../../helpers/database.js';
import { openTestApp, type TestApp } from '../harness.js';

const MAX_RUNNING = 3;

describe.each(testDrivers)('MAX_RUNNING_SANDBOXES (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver, { maxRunningSandboxes: MAX_RUNNING });
  });
  afterAll(() => t.close());
  beforeEach(() => t.reset());

  async function start(): Promise<string> {
    const { status, body } = await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    expect(status).toBe(200);
    return body.id;
  }

  async function desiredStates(): Promise<Map<string, string>> {
    const rows = await t.handle.db.select().from(sandboxes);
    return new Map(rows.map((row) => [row.id, row.desiredState]));
  }

  async function wantedRunning(): Promise<string[]> {
    return [...(await desiredStates())].filter(([, state]) => state === 'RUNNING').map(([id]) => id);
  }

  async function lastActive(id: string, iso: string): Promise<void> {
    await t.handle.db.update(sandboxes).set({ lastActiveAt: new Date(iso) }).where(eq(sandboxes.id, id));
  }

  it('never wants more than the limit running when 50 start in parallel', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => t.call('POST', '/api/v1/sandboxes')));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const states = await desiredStates();
    expect(states.size).toBe(50);
    expect(await wantedRunning()).toHaveLength(MAX_RUNNING);
    expect([...states.values()].filter((s) => s === 'PAUSED')).toHaveLength(50 - MAX_RUNNING);
    // Every sandbox paused to make room was kicked, so the reconciler pauses its container.
    const kicked = new Set(t.reconciler.kicks);
    for (const id of states.keys()) expect(kicked.has(id)).toBe(true);
  });

  it('pauses the least recently used sandbox to start one more', async () => {
    const [a, b, c] = [await start(), await start(), await start()];
    await lastActive(a as string, '2030-01-01T00:00:03Z');
    await lastActive(b as string, '2030-01-01T00:00:01Z');
    await lastActive(c as string, '2030-01-01T00:00:02Z');
    t.reconciler.kicks.length = 0;
    const d = await start();
    expect(await desiredStates()).toEqual(
      new Map([
        [a, 'RUNNING'],
        [b, 'PAUSED'],
        [c, 'RUNNING'],
        [d, 'RUNNING'],
      ]),
    );
    // The new sandbox first: its start is what the caller waits for (c41dd4d).
    expect(t.reconciler.kicks).toEqual([d, b]);
  });

  it('pauses the least recently used sandbox to resume one, and resuming a running one pauses nothing', async () => {
    for (let i = 0; i < MAX_RUNNING + 1; i++) await start();
    const [paused] = [...(await desiredStates())].find(([, state]) => state === 'PAUSED') ?? [];
    const running = (await wantedRunning()).sort();
    for (const [i, id] of running.entries()) await lastActive(id, `2030-01-01T00:00:0${i}Z`);
    expect(await t.call('POST', `/api/v1/sandboxes/${paused}/resume`)).toEqual({ status: 200, body: { success: true } });
    const after = await desiredStates();
    expect(after.get(paused as string)).toBe('RUNNING');
    expect(after.get(running[0] as string)).toBe('PAUSED');
    expect(await wantedRunning()).toHaveLength(MAX_RUNNING);

    await t.call('POST', `/api/v1/sandboxes/${running[1]}/resume`);
    expect(await desiredStates()).toEqual(after);
  });

  it('holds the limit when starts and resumes race', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await start());
    await Promise.all([
      ...ids.map((id) => t.call('POST', `/api/v1/sandboxes/${id}/resume`)),
      ...Array.from({ length: 8 }, () => t.call('POST', '/api/v1/sandboxes')),
    ]);
    expect(await wantedRunning()).toHaveLength(MAX_RUNNING);
    expect((await desiredStates()).size).toBe(16);
  });
});
