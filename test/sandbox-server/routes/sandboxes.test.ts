import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { SandboxInfoSchema, SandboxPageSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { testDrivers } from '../../helpers/database.js';
import { API_KEY, DEFAULT_IMAGE, openTestApp, type TestApp } from '../harness.js';

/** GET /api/v1/sandboxes?id=...: one entry per id, null for an unknown or deleted one. */
const SandboxBatchSchema = z.array(SandboxInfoSchema.nullable());

const SANDBOX_NOT_FOUND = { detail: 'Sandbox not found' };
const SANDBOX_DELETED = { detail: 'Sandbox has been deleted' };

describe.each(testDrivers)('sandbox routes (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver);
  });
  afterAll(() => t.close());
  beforeEach(() => t.reset());

  async function start(): Promise<string> {
    const { status, body } = await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    expect(status).toBe(200);
    return body.id;
  }

  /** Plays the reconciler: the container runs and its agent-server answered. */
  async function markRunning(id: string, hostPorts: Record<string, number>): Promise<void> {
    await t.handle.db.update(sandboxes).set({ status: 'RUNNING', hostPorts, hostAddress: '127.0.0.1', containerId: `container-${id}` }).where(eq(sandboxes.id, id));
  }

  describe('POST /api/v1/sandboxes', () => {
    it('records a sandbox wanted running on the default spec and answers STARTING at once', async () => {
      const { status, body } = await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
      expect(status).toBe(200);
      expect(SandboxInfoSchema.parse(body)).toEqual(body);
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        created_by_user_id: null,
        sandbox_spec_id: DEFAULT_IMAGE,
        status: 'STARTING',
        status_detail: null,
        session_api_key: null,
        exposed_urls: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        agent_server_version: null,
        engine: 'local',
      });
      const [row] = await t.handle.db.select().from(sandboxes).where(eq(sandboxes.id, body.id));
      expect(row?.desiredState).toBe('RUNNING');
      expect(row?.sessionApiKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(t.reconciler.kicks).toEqual([body.id]);
    });

    it('gives every sandbox its own session key', async () => {
      await Promise.all([start(), start()]);
      const rows = await t.handle.db.select().from(sandboxes);
      expect(new Set(rows.map((r) => r.sessionApiKey)).size).toBe(2);
    });

    it('takes sandbox_spec_id from the query or the JSON body', async () => {
      const spec = await t.call('POST', '/api/v1/sandbox-specs', { id: 'other', image: 'busybox:latest' });
      expect(spec.status).toBe(201);
      const byQuery = await t.call('POST', '/api/v1/sandboxes?sandbox_spec_id=other', undefined, SandboxInfoSchema);
      expect(byQuery.body.sandbox_spec_id).toBe('other');
      const byBody = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'other' }, SandboxInfoSchema);
      expect(byBody.body.sandbox_spec_id).toBe('other');
      const both = await t.call('POST', '/api/v1/sandboxes?sandbox_spec_id=other', { sandbox_spec_id: 'other' }, SandboxInfoSchema);
      expect(both.body.sandbox_spec_id).toBe('other');
      const nullBody = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: null }, SandboxInfoSchema);
      expect(nullBody.body.sandbox_spec_id).toBe(DEFAULT_IMAGE);
    });

    it('answers 404 for an unknown spec and writes nothing', async () => {
      for (const path of ['/api/v1/sandboxes?sandbox_spec_id=nope', '/api/v1/sandboxes']) {
        const { status, body } = await t.call('POST', path, path.includes('?') ? undefined : { sandbox_spec_id: 'nope' });
        expect(status).toBe(404);
        expect(body).toEqual({ detail: 'Sandbox spec not found' });
      }
      expect(await t.handle.db.select().from(sandboxes)).toEqual([]);
      expect(t.reconciler.kicks).toEqual([]);
    });

    it('rejects bad bodies with 422 and writes nothing', async () => {
      const cases: [unknown, unknown][] = [
        [{ sandbox_spec_id: 5 }, [{ loc: ['body', 'sandbox_spec_id'], msg: 'Invalid input: expected string, received number', type: 'string_type' }]],
        [{ spec: 'x' }, [{ loc: ['body', 'spec'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]],
      ];
      for (const [input, detail] of cases) {
        const { status, body } = await t.call('POST', '/api/v1/sandboxes', input);
        expect(status).toBe(422);
        expect(body).toEqual({ detail });
      }
      const conflicting = await t.call('POST', '/api/v1/sandboxes?sandbox_spec_id=a', { sandbox_spec_id: 'b' });
      expect(conflicting).toEqual({
        status: 422,
        body: { detail: [{ loc: ['body', 'sandbox_spec_id'], msg: 'differs from sandbox_spec_id in the query', type: 'value_error' }] },
      });
      const response = await t.app.request('/api/v1/sandboxes', {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: '{not json',
      });
      expect(response.status).toBe(422);
      expect(await response.json()).toEqual({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
      expect(await t.handle.db.select().from(sandboxes)).toEqual([]);
    });

    it('gives 50 parallel starts 50 sandboxes', async () => {
      const answers = await Promise.all(Array.from({ length: 50 }, () => t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)));
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
      const ids = new Set(answers.map((a) => a.body.id));
      expect(ids.size).toBe(50);
      const rows = await t.handle.db.select().from(sandboxes);
      expect(new Set(rows.map((r) => r.id))).toEqual(ids);
    });
  });

  describe('GET /api/v1/sandboxes (batch)', () => {
    it('answers in request order with null for unknown and deleted sandboxes', async () => {
      const a = await start();
      const b = await start();
      const gone = await start();
      await t.call('DELETE', `/api/v1/sandboxes/${gone}`);
      const { status, body } = await t.call('GET', `/api/v1/sandboxes?id=${b}&id=missing&id=${a}&id=${gone}&id=${b}`, undefined, SandboxBatchSchema);
      expect(status).toBe(200);
      expect(body.map((s) => s?.id ?? null)).toEqual([b, null, a, null, b]);
      expect(SandboxBatchSchema.parse(body)).toEqual(body);
    });

    it('accepts a single id', async () => {
      const a = await start();
      const { body } = await t.call('GET', `/api/v1/sandboxes?id=${a}`, undefined, SandboxBatchSchema);
      expect(body).toHaveLength(1);
      expect(body[0]?.id).toBe(a);
    });

    it('answers 400 for more than 100 ids and 422 for none', async () => {
      const ids = (n: number) => Array.from({ length: n }, (_, i) => `id=s${i}`).join('&');
      expect((await t.call('GET', `/api/v1/sandboxes?${ids(100)}`)).status).toBe(200);
      expect(await t.call('GET', `/api/v1/sandboxes?${ids(101)}`)).toEqual({ status: 400, body: { detail: 'Too many ids: at most 100 per request' } });
      expect(await t.call('GET', '/api/v1/sandboxes')).toEqual({
        status: 422,
        body: { detail: [{ loc: ['query', 'id'], msg: 'Field required', type: 'missing' }] },
      });
    });

    it('shows the session key and URLs only while RUNNING', async () => {
      const id = await start();
      await markRunning(id, { AGENT_SERVER: 40123, VSCODE: 40124 });
      const [row] = await t.handle.db.select().from(sandboxes).where(eq(sandboxes.id, id));
      const { body } = await t.call('GET', `/api/v1/sandboxes?id=${id}`, undefined, SandboxBatchSchema);
      expect(body[0]).toMatchObject({
        status: 'RUNNING',
        session_api_key: row?.sessionApiKey,
        exposed_urls: [
          { name: 'AGENT_SERVER', url: 'http://127.0.0.1:40123', port: 40123 },
          // Named ports but the agent-server's are reached as preview URLs, here at the request's origin.
          { name: 'VSCODE', url: `http://localhost/api/v1/sandboxes/${id}/ports/VSCODE/`, port: 40124 },
        ],
      });
    });
  });

  describe('GET /api/v1/sandboxes/search', () => {
    it('lists newest first and walks every sandbox exactly once across pages', async () => {
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push(await start());
      await Promise.all(Array.from({ length: 10 }, () => start().then((id) => created.push(id))));
      const seen: string[] = [];
      let pageId: string | null = null;
      let pages = 0;
      do {
        const query: string = pageId ? `limit=3&page_id=${encodeURIComponent(pageId)}` : 'limit=3';
        const { status, body } = await t.call('GET', `/api/v1/sandboxes/search?${query}`, undefined, SandboxPageSchema);
        expect(status).toBe(200);
        expect(SandboxPageSchema.parse(body)).toEqual(body);
        seen.push(...body.items.map((s) => s.id));
        pageId = body.next_page_id;
        pages++;
      } while (pageId);
      expect(pages).toBe(6);
      expect(seen).toHaveLength(17);
      expect(new Set(seen)).toEqual(new Set(created));
      const rows = await t.handle.db.select().from(sandboxes);
      const order = (id: string) => rows.find((r) => r.id === id)?.createdAt.getTime() ?? 0;
      for (let i = 1; i < seen.length; i++) expect(order(seen[i - 1] as string)).toBeGreaterThanOrEqual(order(seen[i] as string));
      // The first seven were created one after another: newest first means reversed.
      expect(seen.slice(-7)).toEqual(created.slice(0, 7).reverse());
    });

    it('keeps a page id valid after its sandbox is deleted', async () => {
      for (let i = 0; i < 4; i++) await start();
      const first = await t.call('GET', '/api/v1/sandboxes/search?limit=2', undefined, SandboxPageSchema);
      const cursor = first.body.next_page_id as string;
      await t.call('DELETE', `/api/v1/sandboxes/${cursor}`);
      const second = await t.call('GET', `/api/v1/sandboxes/search?limit=2&page_id=${cursor}`, undefined, SandboxPageSchema);
      expect(second.status).toBe(200);
      expect(second.body.items).toHaveLength(1);
      expect(second.body.next_page_id).toBeNull();
    });

    it('filters by observed status and hides deleted sandboxes', async () => {
      const running = await start();
      const starting = await start();
      const deleted = await start();
      await markRunning(running, { AGENT_SERVER: 40000 });
      await t.call('DELETE', `/api/v1/sandboxes/${deleted}`);
      const ids = async (query: string) => (await t.call('GET', `/api/v1/sandboxes/search${query}`, undefined, SandboxPageSchema)).body.items.map((s) => s.id);
      expect(await ids('')).toEqual([starting, running]);
      expect(await ids('?status=RUNNING')).toEqual([running]);
      expect(await ids('?status=STARTING')).toEqual([starting]);
      expect(await ids('?status=ERROR')).toEqual([]);
    });

    it('answers an empty page when there is nothing', async () => {
      expect(await t.call('GET', '/api/v1/sandboxes/search')).toEqual({ status: 200, body: { items: [], next_page_id: null } });
    });

    it('rejects bad queries with 422', async () => {
      const cases: [string, unknown][] = [
        ['limit=0', { loc: ['query', 'limit'], msg: 'Too small: expected number to be >=1', type: 'greater_than_equal' }],
        ['limit=101', { loc: ['query', 'limit'], msg: 'Too big: expected number to be <=100', type: 'less_than_equal' }],
        ['limit=abc', { loc: ['query', 'limit'], msg: 'Invalid input: expected number, received NaN', type: 'number_type' }],
        ['status=BOGUS', { loc: ['query', 'status'], msg: expect.stringContaining('STARTING'), type: 'enum' }],
        ['page_id=unknown', { loc: ['query', 'page_id'], msg: 'Unknown page_id', type: 'value_error' }],
      ];
      for (const [query, item] of cases) {
        const { status, body } = await t.call('GET', `/api/v1/sandboxes/search?${query}`);
        expect(status, query).toBe(422);
        expect(body, query).toEqual({ detail: [item] });
      }
    });
  });

  describe('pause, resume, delete', () => {
    async function desired(id: string) {
      const [row] = await t.handle.db.select().from(sandboxes).where(eq(sandboxes.id, id));
      return row?.desiredState;
    }

    it('record the intent, answer {success: true} and kick the reconciler', async () => {
      const id = await start();
      t.reconciler.kicks.length = 0;
      expect(await t.call('POST', `/api/v1/sandboxes/${id}/pause`, {})).toEqual({ status: 200, body: { success: true } });
      expect(await desired(id)).toBe('PAUSED');
      expect(await t.call('POST', `/api/v1/sandboxes/${id}/pause`)).toEqual({ status: 200, body: { success: true } });
      expect(await t.call('POST', `/api/v1/sandboxes/${id}/resume`, {})).toEqual({ status: 200, body: { success: true } });
      expect(await desired(id)).toBe('RUNNING');
      expect(await t.call('POST', `/api/v1/sandboxes/${id}/resume`)).toEqual({ status: 200, body: { success: true } });
      expect(await t.call('DELETE', `/api/v1/sandboxes/${id}`)).toEqual({ status: 200, body: { success: true } });
      expect(await desired(id)).toBe('DELETED');
      expect(t.reconciler.kicks).toEqual([id, id, id, id, id]);
    });

    it('resume marks the sandbox as just used', async () => {
      const id = await start();
      const old = new Date('2020-01-01T00:00:00Z');
      await t.handle.db.update(sandboxes).set({ lastActiveAt: old }).where(eq(sandboxes.id, id));
      await t.call('POST', `/api/v1/sandboxes/${id}/resume`);
      const [row] = await t.handle.db.select().from(sandboxes).where(eq(sandboxes.id, id));
      expect(row?.lastActiveAt.getTime()).toBeGreaterThan(old.getTime());
    });

    it('resume starts an ERROR or MISSING sandbox afresh: a new restart generation and a new session key', async () => {
      const row = async (id: string) => (await t.handle.db.select().from(sandboxes).where(eq(sandboxes.id, id)))[0]!;
      const id = await start();
      const first = await row(id);
      await t.call('POST', `/api/v1/sandboxes/${id}/resume`);
      expect(await row(id)).toMatchObject({ restartGeneration: 0, sessionApiKey: first.sessionApiKey });

      for (const [status, generation] of [['ERROR', 1], ['MISSING', 2]] as const) {
        const before = await row(id);
        await t.handle.db.update(sandboxes).set({ status }).where(eq(sandboxes.id, id));
        expect(await t.call('POST', `/api/v1/sandboxes/${id}/resume`)).toEqual({ status: 200, body: { success: true } });
        const after = await row(id);
        expect(after).toMatchObject({ desiredState: 'RUNNING', restartGeneration: generation });
        expect(after.sessionApiKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(after.sessionApiKey).not.toBe(before.sessionApiKey);
      }
    });

    it('answer 404 for an unknown sandbox', async () => {
      expect(await t.call('POST', '/api/v1/sandboxes/unknown/pause')).toEqual({ status: 404, body: SANDBOX_NOT_FOUND });
      expect(await t.call('POST', '/api/v1/sandboxes/unknown/resume')).toEqual({ status: 404, body: SANDBOX_NOT_FOUND });
      expect(await t.call('DELETE', '/api/v1/sandboxes/unknown')).toEqual({ status: 404, body: SANDBOX_NOT_FOUND });
    });

    it('answer 409 for pausing or resuming a deleted sandbox; deleting again succeeds', async () => {
      const id = await start();
      await t.call('DELETE', `/api/v1/sandboxes/${id}`);
      expect(await t.call('POST', `/api/v1/sandboxes/${id}/pause`)).toEqual({ status: 409, body: SANDBOX_DELETED });
      expect(await t.call('POST', `/api/v1/sandboxes/${id}/resume`)).toEqual({ status: 409, body: SANDBOX_DELETED });
      expect(await t.call('DELETE', `/api/v1/sandboxes/${id}`)).toEqual({ status: 200, body: { success: true } });
      expect(await desired(id)).toBe('DELETED');
    });
  });

  describe('the agent proxy while the sandbox starts', () => {
    it("forwards as soon as the sandbox's agent-server answers, with its session key, before the reconciler writes RUNNING", async () => {
      const id = await start();
      const keysSeen = new Set<string | string[] | undefined>();
      const agentServer = createServer((req, res) => {
        keysSeen.add(req.headers['x-session-api-key']);
        if (req.url === '/alive') return void res.writeHead(200).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
      });
      await new Promise<void>((resolve) => agentServer.listen(0, '127.0.0.1', resolve));
      try {
        // Plays the reconciler: the container is up, its agent-server not yet seen answering.
        const hostPorts = { AGENT_SERVER: (agentServer.address() as AddressInfo).port };
        await t.handle.db.update(sandboxes).set({ hostPorts, hostAddress: '127.0.0.1', containerId: `container-${id}` }).where(eq(sandboxes.id, id));

        const proxied = `/api/v1/sandboxes/${id}/agent/api/conversations/count`;
        expect((await t.app.request(proxied)).status).toBe(401);
        const response = await t.app.request(proxied, { headers: { authorization: `Bearer ${API_KEY}` } });

        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ path: '/api/conversations/count' });
        const [row] = await t.handle.db.select().from(sandboxes).where(eq(sandboxes.id, id));
        expect(keysSeen).toEqual(new Set([row?.sessionApiKey]));
        expect(row?.status).toBe('STARTING');
      } finally {
        await new Promise((resolve) => agentServer.close(resolve));
      }
    });
  });

  it('points / to the documentation, and says which content type a body needs', async () => {
    const root = await t.call('GET', '/', undefined, z.object({ detail: z.string() }));
    expect(root.status).toBe(200);
    expect(root.body.detail).toContain('/docs');
    const untyped = await t.app.request('/api/v1/sandboxes', { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` }, body: '{}' });
    expect(untyped.status).toBe(415);
    expect(await untyped.json()).toEqual({ detail: 'Unsupported Media Type: send the request body as JSON, with the header "Content-Type: application/json"' });
  });

  it('answers 404 with FastAPI\'s body for an unknown route', async () => {
    expect(await t.call('GET', '/api/v1/nothing-here')).toEqual({ status: 404, body: { detail: 'Not Found' } });
  });
});
