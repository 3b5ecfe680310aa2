/**
 * Control-plane API throughput: GET /api/v1/sandboxes/search (limit 100) over 1,000 sandbox rows,
 * through a real HTTP server with keep-alive connections, beside its floor measured in the same
 * run: the same page read straight from the database by the same service function, no HTTP.
 * Runs on PGlite, and on PostgreSQL too when DATABASE_URL is set.
 * Run: `npm run bench -- api`.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { EventFeed } from '../src/sandbox-server/lifecycle-events/event-feed.js';
import { createSandboxServerApp } from '../src/sandbox-server/app.js';
import { openDatabase } from '../src/sandbox-server/db/client.js';
import { registerConfiguredEngines } from '../src/sandbox-server/engines/register-engines.js';
import { sandboxes } from '../src/sandbox-server/db/schema.js';
import { newSandboxId, newSessionApiKey } from '../src/sandbox-server/services/sandboxes/new-ids.js';
import { searchSandboxes } from '../src/sandbox-server/services/sandboxes/search-sandboxes.js';
import { NO_SNAPSHOT_ENGINE } from '../src/sandbox-server/services/snapshots/no-engine.js';
import { ensureDefaultSandboxSpec } from '../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { formatMs, formatRatio, measure, printTable } from './measure.js';

const ROWS = 1_000;
const REQUESTS = 2_000;
const CONCURRENCY = 8;
const API_KEY = 'bench-api-key-0123456789';

export async function run(): Promise<void> {
  const rows: string[][] = [];
  const targets: { name: string; url?: string }[] = [{ name: 'pglite' }];
  if (process.env.DATABASE_URL) targets.push({ name: 'postgres', url: process.env.DATABASE_URL });
  for (const target of targets) rows.push(await benchOne(target.name, target.url));
  console.log(`GET /api/v1/sandboxes/search?limit=100 over ${ROWS} rows, ${REQUESTS} requests, ${CONCURRENCY} at a time`);
  printTable(['database', 'HTTP req/s', 'HTTP p50', 'HTTP p99', 'floor req/s', 'floor p50', 'floor/HTTP'], rows);
}

async function benchOne(name: string, url: string | undefined): Promise<string[]> {
  const handle = await openDatabase(url ? { url } : {});
  await registerConfiguredEngines(handle.db, undefined, 'unix:///var/run/docker.sock');
  try {
    await handle.db.delete(sandboxes);
    const specId = 'bench/agent-server:api';
    await ensureDefaultSandboxSpec(handle.db, specId);
    const now = Date.now();
    await handle.db.insert(sandboxes).values(
      Array.from({ length: ROWS }, (_, i) => ({
        id: newSandboxId(),
        specId,
        engine: 'local',
        desiredState: 'RUNNING' as const,
        status: i % 3 === 0 ? ('PAUSED' as const) : ('RUNNING' as const),
        sessionApiKey: newSessionApiKey(),
        hostPorts: { AGENT_SERVER: 30_000 + i },
        hostAddress: '127.0.0.1',
        createdAt: new Date(now - i * 1000),
      })),
    );
    const ctx = { db: handle.db, reconciler: { kick: () => {} }, maxRunningSandboxes: ROWS, runtimes: { available: null }, snapshots: NO_SNAPSHOT_ENGINE };
    const { app } = createSandboxServerApp({ ...ctx, apiKeys: [API_KEY], events: new EventFeed() });
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const http = await concurrently(async () => {
        const response = await fetch(`${base}/api/v1/sandboxes/search?limit=100`, { headers: { authorization: `Bearer ${API_KEY}` } });
        if (response.status !== 200) throw new Error(`search answered ${response.status}`);
        await response.arrayBuffer();
      });
      const floor = await concurrently(() => searchSandboxes(ctx, { limit: 100 }));
      return [
        name,
        http.perSecond.toFixed(0),
        formatMs(http.p50),
        formatMs(http.p99),
        floor.perSecond.toFixed(0),
        formatMs(floor.p50),
        formatRatio(floor.perSecond / http.perSecond),
      ];
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  } finally {
    await handle.db.delete(sandboxes);
    await handle.close();
  }
}

/** REQUESTS calls, CONCURRENCY at a time: throughput and per-call latency percentiles. */
async function concurrently(call: () => Promise<unknown>) {
  const perWorker = REQUESTS / CONCURRENCY;
  const started = performance.now();
  const workers = await Promise.all(Array.from({ length: CONCURRENCY }, () => measure(perWorker, call)));
  const seconds = (performance.now() - started) / 1000;
  const p50 = workers.map((w) => w.p50).sort((a, b) => a - b)[Math.floor(CONCURRENCY / 2)]!;
  const p99 = Math.max(...workers.map((w) => w.p99));
  return { perSecond: REQUESTS / seconds, p50, p99 };
}
