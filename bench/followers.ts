/**
 * What lifecycle-event followers cost each commit: 200 status changes committed one after another
 * (each an event in its transaction, as the reconciler writes them), with no follower, with 300
 * followers sharing the process's one tail (one query per commit, fanned out), and, as the
 * baseline, with 300 followers each reading for itself (a query per follower per commit, as every
 * stream did before). Needs DATABASE_URL (PostgreSQL, where followers and commits contend).
 */
import { setMaxListeners } from 'node:events';
import { logger } from '../src/logger.js';
import { openDatabase, type DatabaseHandle } from '../src/sandbox-server/db/client.js';
import { EventFeed } from '../src/sandbox-server/lifecycle-events/event-feed.js';
import { EventTail } from '../src/sandbox-server/lifecycle-events/event-tail.js';
import { latestEventId } from '../src/sandbox-server/lifecycle-events/event-tail.js';
import { followEvents } from '../src/sandbox-server/lifecycle-events/follow-events.js';
import { recordEvent } from '../src/sandbox-server/lifecycle-events/record-event.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { formatMs, formatRatio, percentile, printTable, until } from './measure.js';

const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 300);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 200);

type Mode = 'none' | 'shared tail' | 'a query each';

export async function run(): Promise<void> {
  if (!process.env.DATABASE_URL) {
    console.log('followers: skipped, set DATABASE_URL to a PostgreSQL server');
    return;
  }
  const database = await createTestDatabase();
  const handle = await openDatabase({ url: database.url, queryTimeoutMs: 60_000 });
  try {
    const results = new Map<Mode, { commits: number[]; drainMs: number }>();
    for (const mode of ['none', 'shared tail', 'a query each'] as const) results.set(mode, await measureMode(handle, mode));
    const base = percentile(results.get('none')?.commits ?? [], 0.5);
    printTable(
      ['followers', 'commit p50', 'commit p90', 'mean', 'p50 vs none', 'all followers had the last event'],
      [...results].map(([mode, { commits, drainMs }]) => [
        mode === 'none' ? 'none' : `${FOLLOWERS}, ${mode}`,
        formatMs(percentile(commits, 0.5)),
        formatMs(percentile(commits, 0.9)),
        formatMs(commits.reduce((sum, ms) => sum + ms, 0) / commits.length),
        formatRatio(percentile(commits, 0.5) / base),
        mode === 'none' ? '-' : `${formatMs(drainMs)} after it committed`,
      ]),
    );
  } finally {
    await handle.close();
    await database.drop();
  }
}

async function measureMode(handle: DatabaseHandle, mode: Mode): Promise<{ commits: number[]; drainMs: number }> {
  const feed = new EventFeed();
  await feed.listen(handle.listen);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const shared = new EventTail(handle.db, feed, logger);
  const afterId = await latestEventId(handle.db);
  const count = mode === 'none' ? 0 : FOLLOWERS;
  /** The newest event id each follower has had. */
  const seen = new Array<number>(count).fill(0);
  const following = Array.from({ length: count }, async (_, follower) => {
    const tail = mode === 'shared tail' ? shared : new EventTail(handle.db, feed, logger);
    for await (const event of followEvents({ db: handle.db, feed, tail, filter: {}, afterId, signal: stop.signal })) seen[follower] = Number(event.id);
  });
  const commits: number[] = [];
  let committedAt = 0;
  for (let i = 0; i < COMMITS; i++) {
    const started = performance.now();
    await handle.db.transaction((tx) =>
      recordEvent(tx, {
        type: 'sandbox.running',
        subjectKind: 'sandbox',
        subjectId: `bench-${i}`,
        sandboxId: null,
        previousStatus: 'STARTING',
        status: 'RUNNING',
        statusDetail: null,
      }),
    );
    committedAt = performance.now();
    commits.push(committedAt - started);
  }
  const lastId = await latestEventId(handle.db);
  await until(async () => seen.every((id) => id >= lastId), { pollMs: 1, timeoutMs: 300_000 });
  const drainMs = performance.now() - committedAt;
  stop.abort();
  await feed.close();
  await Promise.allSettled(following);
  // The tails' last reads, started by the feed's closing, end before the database does.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return { commits, drainMs };
}
