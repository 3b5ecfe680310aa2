import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { lifecycleEvents } from '../../../src/sandbox-server/db/schema.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { EventTail } from '../../../src/sandbox-server/lifecycle-events/event-tail.js';
import { followEvents } from '../../../src/sandbox-server/lifecycle-events/follow-events.js';
import { logger } from '../../../src/logger.js';
import { recordEvent } from '../../../src/sandbox-server/lifecycle-events/record-event.js';
import { deleteEventsBefore } from '../../../src/sandbox-server/lifecycle-events/retention.js';
import { LifecycleEventPageSchema, LifecycleEventSchema, type LifecycleEvent } from '../../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { readAnswer, ValidationErrorSchema } from '../../helpers/answer.js';
import { testDrivers } from '../../helpers/database.js';
import { ADMIN_KEY, API_KEY, openTestApp, type TestApp } from '../harness.js';
import { SseReader } from './sse.js';

const auth = { authorization: `Bearer ${API_KEY}` };

describe.each(testDrivers)('lifecycle events (%s)', (driver) => {
  let t: TestApp;
  let server: ServerType;
  let baseUrl = '';
  beforeAll(async () => {
    t = await openTestApp(driver);
    server = await new Promise<ServerType>((resolve) => {
      const listening = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(listening));
    });
    t.injectWebSocket(server);
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => t.reset());

  async function startSandbox(): Promise<string> {
    const { status, body } = await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    expect(status).toBe(200);
    return body.id;
  }

  /** Plays the reconciler's status write: the change and its event in one transaction. */
  async function recordStatus(sandboxId: string, previous: string, status: 'RUNNING' | 'PAUSED'): Promise<void> {
    await t.handle.db.transaction((tx) =>
      recordEvent(tx, {
        type: status === 'RUNNING' ? 'sandbox.running' : 'sandbox.paused',
        subjectKind: 'sandbox',
        subjectId: sandboxId,
        sandboxId,
        previousStatus: previous,
        status,
        statusDetail: null,
      }),
    );
  }

  function openStream(query = '', headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${baseUrl}/api/v1/events/stream${query}`, { headers: { ...auth, ...headers } });
  }

  describe('GET /api/v1/events/search', () => {
    it('records sandbox.created in the transaction that creates the sandbox', async () => {
      const id = await startSandbox();
      const { status, body } = await t.call('GET', '/api/v1/events/search', undefined, LifecycleEventPageSchema);
      expect(status).toBe(200);
      expect(LifecycleEventPageSchema.parse(body)).toEqual(body);
      expect(body).toEqual({
        items: [
          {
            id: expect.stringMatching(/^\d+$/),
            type: 'sandbox.created',
            subject_kind: 'sandbox',
            subject_id: id,
            sandbox_id: id,
            previous_status: null,
            status: 'STARTING',
            status_detail: null,
            timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          },
        ],
        next_page_id: null,
      });
    });

    it('filters by type, sandbox and time, and pages in id order both ways', async () => {
      const a = await startSandbox();
      const b = await startSandbox();
      await recordStatus(a, 'STARTING', 'RUNNING');
      await recordStatus(a, 'RUNNING', 'PAUSED');
      const search = (query: string) => t.call('GET', `/api/v1/events/search${query}`, undefined, LifecycleEventPageSchema);
      const all = (await search('')).body.items;
      expect(all.map((e) => [e.type, e.sandbox_id])).toEqual([
        ['sandbox.created', a],
        ['sandbox.created', b],
        ['sandbox.running', a],
        ['sandbox.paused', a],
      ]);
      const ids = all.map((e) => Number(e.id));
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);

      const ofA = await search(`?sandbox_id=${a}`);
      expect(ofA.body.items.map((e) => e.type)).toEqual(['sandbox.created', 'sandbox.running', 'sandbox.paused']);
      const typed = await search('?type=sandbox.running&type=sandbox.paused');
      expect(typed.body.items.map((e) => e.type)).toEqual(['sandbox.running', 'sandbox.paused']);
      const one = await search('?type=sandbox.created');
      expect(one.body.items).toHaveLength(2);

      const future = new Date(Date.now() + 60_000).toISOString();
      expect((await search(`?timestamp__gte=${future}`)).body.items).toEqual([]);
      expect((await search(`?timestamp__lt=${future}`)).body.items).toHaveLength(4);
      const since = encodeURIComponent(all[0]?.timestamp ?? '');
      expect((await search(`?timestamp__gte=${since}`)).body.items).toHaveLength(4);

      const forward: string[] = [];
      let pageId: string | null = null;
      do {
        const page = await search(`?limit=3${pageId ? `&page_id=${pageId}` : ''}`);
        forward.push(...page.body.items.map((e) => e.id));
        pageId = page.body.next_page_id;
      } while (pageId);
      expect(forward).toEqual(all.map((e) => e.id));

      const newest = await search('?sort_order=TIMESTAMP_DESC&limit=3');
      expect(newest.body.items.map((e) => e.id)).toEqual(all.map((e) => e.id).reverse().slice(0, 3));
      const rest = await t.call('GET', `/api/v1/events/search?sort_order=TIMESTAMP_DESC&page_id=${newest.body.next_page_id}`);
      expect(rest.body).toEqual({ items: [all[0]], next_page_id: null });
    });

    it('answers 422 for bad filters', async () => {
      for (const query of ['sandbox_id=%00', 'type=sandbox.exploded', 'page_id=abc', 'page_id=99999999999999999999', 'timestamp__gte=yesterday', 'limit=0', 'sort_order=UP']) {
        const { status, body } = await t.call('GET', `/api/v1/events/search?${query}`, undefined, ValidationErrorSchema);
        expect(status, query).toBe(422);
        expect(body.detail[0]).toMatchObject({ msg: expect.any(String), type: expect.any(String) });
        expect(body.detail[0]?.loc.slice(0, 2)).toEqual(['query', query.split('=')[0]]);
      }
    });

    it('needs the API key', async () => {
      const response = await t.app.request('/api/v1/events/search');
      expect(response.status).toBe(401);
    });
  });

  describe('retention', () => {
    it('removes events older than the cutoff and keeps the rest', async () => {
      const id = await startSandbox();
      await t.handle.db.update(lifecycleEvents).set({ createdAt: new Date(Date.now() - 8 * 86_400_000) });
      await recordStatus(id, 'STARTING', 'RUNNING');
      expect(await deleteEventsBefore(t.handle.db, new Date(Date.now() - 7 * 86_400_000))).toBe(1);
      const left = await t.call('GET', '/api/v1/events/search', undefined, LifecycleEventPageSchema);
      expect(left.body.items.map((e) => e.type)).toEqual(['sandbox.running']);
    });
  });

  describe('GET /api/v1/events/stream', () => {
    it('streams new events live, and resumes after Last-Event-ID with no gap and no duplicate', async () => {
      const response = await openStream();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const live = new SseReader(response.body as ReadableStream<Uint8Array>);
      const id = await startSandbox();
      await recordStatus(id, 'STARTING', 'RUNNING');
      const first = await live.take(2);
      expect(first.map((m) => m.data.type)).toEqual(['sandbox.created', 'sandbox.running']);
      expect(first.map((m) => m.id)).toEqual(first.map((m) => m.data.id));
      await live.cancel();

      // Missed while disconnected: a pause. The reconnect names the last id it saw.
      await recordStatus(id, 'RUNNING', 'PAUSED');
      const resumed = new SseReader((await openStream('', { 'last-event-id': first[1]?.id ?? '' })).body as ReadableStream<Uint8Array>);
      await recordStatus(id, 'PAUSED', 'RUNNING');
      const next = await resumed.take(2);
      expect(next.map((m) => [m.data.type, m.data.previous_status])).toEqual([
        ['sandbox.paused', 'RUNNING'],
        ['sandbox.running', 'PAUSED'],
      ]);
      await resumed.cancel();

      // The query names a start too; the header, sent by an EventSource reconnecting, wins.
      const fromQuery = new SseReader(
        (await openStream(`?after_event_id=${first[0]?.id}`, { 'last-event-id': next[0]?.id ?? '' })).body as ReadableStream<Uint8Array>,
      );
      expect((await fromQuery.take(1)).map((m) => m.id)).toEqual([next[1]?.id]);
      await fromQuery.cancel();
    });

    it('filters by sandbox and type', async () => {
      const stream = new SseReader((await openStream('?type=sandbox.paused')).body as ReadableStream<Uint8Array>);
      const a = await startSandbox();
      const b = await startSandbox();
      await recordStatus(a, 'STARTING', 'RUNNING');
      await recordStatus(b, 'STARTING', 'PAUSED');
      expect((await stream.take(1)).map((m) => [m.data.type, m.data.sandbox_id])).toEqual([['sandbox.paused', b]]);
      await stream.cancel();
      const ofA = new SseReader((await openStream(`?sandbox_id=${a}&after_event_id=0`)).body as ReadableStream<Uint8Array>);
      expect((await ofA.take(2)).map((m) => m.data.type)).toEqual(['sandbox.created', 'sandbox.running']);
      await ofA.cancel();
    });

    it('lets each key have MAX_EVENT_STREAMS_PER_KEY streams open, answering 429 past it, and takes one again once closed', async () => {
      const capped = await openTestApp(driver, { maxEventStreamsPerKey: 2 });
      const cappedServer = await new Promise<ServerType>((resolve) => {
        const listening = serve({ fetch: capped.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(listening));
      });
      const url = `http://127.0.0.1:${(cappedServer.address() as AddressInfo).port}/api/v1/events/stream`;
      const open = (key: string) => fetch(url, { headers: { authorization: `Bearer ${key}` } });
      try {
        const streams = [await open(API_KEY), await open(API_KEY)];
        expect(streams.map((response) => response.status)).toEqual([200, 200]);
        const refused = await open(API_KEY);
        expect(refused.status).toBe(429);
        expect(await refused.json()).toEqual({
          detail: 'This API key has 2 lifecycle event streams open, as many as MAX_EVENT_STREAMS_PER_KEY allows; close one first',
        });
        // Another key has streams of its own.
        const other = await open(ADMIN_KEY);
        expect(other.status).toBe(200);
        await other.body?.cancel();
        await streams[0]?.body?.cancel();
        await expect.poll(async () => {
          const again = await open(API_KEY);
          await again.body?.cancel();
          return again.status;
        }).toBe(200);
        // Every stream still gets the events, from the one tail they share.
        const live = new SseReader(streams[1]?.body as ReadableStream<Uint8Array>);
        const created = await capped.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
        expect((await live.take(1)).map((m) => m.data.sandbox_id)).toEqual([created.body.id]);
        await live.cancel();
      } finally {
        cappedServer.close();
        await capped.close();
      }
    });

    it('answers 422 for a bad Last-Event-ID or filter', async () => {
      const badHeader = await openStream('', { 'last-event-id': 'yesterday' });
      expect(badHeader.status).toBe(422);
      expect((await readAnswer(badHeader, ValidationErrorSchema)).body.detail[0]?.loc).toEqual(['header', 'last-event-id']);
      const badType = await openStream('?type=nope');
      expect(badType.status).toBe(422);
      expect((await readAnswer(badType, ValidationErrorSchema)).body.detail[0]?.loc).toEqual(['query', 'type', 0]);
    });
  });

  describe('GET /api/v1/events/socket', () => {
    it('sends each event after after_event_id once, then live ones, as JSON frames', async () => {
      const id = await startSandbox();
      const [created] = (await t.call('GET', '/api/v1/events/search', undefined, LifecycleEventPageSchema)).body.items;
      await recordStatus(id, 'STARTING', 'RUNNING');
      const socket = new WebSocket(`${baseUrl.replace('http', 'ws')}/api/v1/events/socket?sandbox_id=${id}&after_event_id=${created?.id}`, {
        headers: auth,
      });
      const frames: LifecycleEvent[] = [];
      const gotTwo = new Promise<void>((resolve) =>
        socket.on('message', (data) => {
          frames.push(LifecycleEventSchema.parse(JSON.parse(String(data))));
          if (frames.length === 2) resolve();
        }),
      );
      await new Promise((resolve) => socket.once('open', resolve));
      await recordStatus(id, 'RUNNING', 'PAUSED');
      await gotTwo;
      expect(frames.map((f) => f.type)).toEqual(['sandbox.running', 'sandbox.paused']);
      socket.close();
    });

    it('answers 422 for bad filters and 401 without a key', async () => {
      const bad = await fetch(`${baseUrl}/api/v1/events/socket?after_event_id=x`, { headers: auth });
      expect(bad.status).toBe(422);
      expect((await readAnswer(bad, ValidationErrorSchema)).body.detail[0]?.loc).toEqual(['query', 'after_event_id']);
      expect((await fetch(`${baseUrl}/api/v1/events/socket`)).status).toBe(401);
      expect((await fetch(`${baseUrl}/api/v1/events/socket`, { headers: auth })).status).toBe(426);
    });
  });

  it('delivers ids in commit order to a concurrent reader, even when an earlier transaction commits late', async () => {
    const feed = new EventFeed();
    await feed.listen(t.handle.listen);
    const abort = new AbortController();
    const seen: number[] = [];
    const WRITERS = 12;
    const reading = (async () => {
      for await (const event of followEvents({ db: t.handle.db, feed, tail: new EventTail(t.handle.db, feed, logger), filter: {}, afterId: 0, signal: abort.signal })) {
        seen.push(Number(event.id));
        if (seen.length === WRITERS) abort.abort();
      }
    })();
    // Each writer holds its transaction open a different time after recording its event, so
    // with a plain sequence later ids would often commit before earlier ones.
    await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        t.handle.db.transaction(async (tx) => {
          await recordEvent(tx, {
            type: 'sandbox.running',
            subjectKind: 'sandbox',
            subjectId: `s${i}`,
            sandboxId: `s${i}`,
            previousStatus: 'STARTING',
            status: 'RUNNING',
            statusDetail: null,
          });
          await tx.execute(sql`select pg_sleep(${((WRITERS - i) % 4) * 0.02})`);
        }),
      ),
    );
    await reading;
    await feed.close();
    const stored = (await t.handle.db.select({ id: lifecycleEvents.id }).from(lifecycleEvents)).map((r) => r.id).sort((x, y) => x - y);
    expect(seen).toEqual(stored);
  });
});
