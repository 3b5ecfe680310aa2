/**
 * Fuzzes every operation of the control plane's /openapi.json through app.request(), over each
 * database it runs on (PGlite, and PostgreSQL when DATABASE_URL is set, as in CI). No container is
 * created: the reconciler stand-in fails every sandbox it is asked about (ERROR), as one without a
 * reachable engine would, so proxied requests answer at once instead of waiting for a start.
 */
import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { sandboxes } from '../../src/sandbox-server/db/schema.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testDrivers } from '../helpers/database.js';
import { API_KEY, openTestApp, type TestApp } from '../sandbox-server/harness.js';
import { fuzz, fuzzSeed } from './fuzz-run.js';
import { idPool } from './fuzz-helpers.js';
import type { Hint } from './schema-arbitrary.js';

const RUNS = Number(process.env['FUZZ_RUNS_CONTROL_PLANE'] ?? 5000);

describe.each(testDrivers)('control plane on %s', (driver) => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await openTestApp(driver, {
      onKick(db, sandboxId) {
        if (sandboxId === undefined) return;
        void db
          .update(sandboxes)
          .set({ status: 'ERROR', statusDetail: 'the fuzz suite has no container engine' })
          .where(eq(sandboxes.id, sandboxId))
          .catch(() => undefined);
      },
    });
  });

  afterAll(async () => {
    await testApp?.close();
  });

  test('no generated request gets a 5xx, a malformed error or no answer, and the server answers afterwards', { timeout: 600_000 }, async () => {
    const runs = Math.ceil(RUNS / testDrivers.length);
    const ids = idPool();
    const hint: Hint = (field) => {
      if (/(^|_)ids?$/.test(field)) return { arbitrary: ids.arbitrary };
      if (field === 'timeout') return { arbitrary: fc.integer({ min: 1, max: 2 }) };
      // Exact: a hostile value can be read as true, and a wait without the hinted timeout holds the
      // request for the default 300 s, which the fuzz runner reports as a stall.
      if (field === 'wait') return { arbitrary: fc.constant(false), exact: true };
      return undefined;
    };
    const send = async (request: { url: string; method: string; headers: Record<string, string>; body?: string | FormData }) =>
      testApp.app.request(request.url, { method: request.method, headers: { ...request.headers, authorization: `Bearer ${API_KEY}` }, body: request.body });
    const document = await (await testApp.app.request('/openapi.json')).json();
    const seed = fuzzSeed();
    const started = Date.now();
    const tally = await fuzz({ name: `control plane on ${driver}`, document, hint, send, observe: ids.observe }, { numRuns: runs, seed });
    console.log(
      `fuzz control plane on ${driver}: seed ${seed}, ${tally.requests} requests over ${tally.operations} operations in ${Date.now() - started} ms, by status ${JSON.stringify(tally.byStatus)}`,
    );
    expect(tally.requests).toBeGreaterThanOrEqual(runs);

    // Still serving: a spec and a sandbox can be created and found.
    expect((await testApp.app.request('/alive')).status).toBe(200);
    const spec = await testApp.call('POST', '/api/v1/sandbox-specs', { id: `after-fuzz-${driver}`, image: 'after-fuzz:1' });
    expect(spec.status).toBe(201);
    const sandbox = await testApp.call('POST', `/api/v1/sandboxes?sandbox_spec_id=after-fuzz-${driver}`, {}, SandboxInfoSchema);
    expect(sandbox.status).toBe(200);
    const found = await testApp.call('GET', `/api/v1/sandboxes?id=${sandbox.body.id}`);
    expect(found.body).toEqual([expect.objectContaining({ id: sandbox.body.id, sandbox_spec_id: `after-fuzz-${driver}` })]);
  });
});
