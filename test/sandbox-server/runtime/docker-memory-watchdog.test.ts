/**
 * When the memory watchdog ends a container after an `oom` event, against a stand-in engine on a
 * unix socket whose stats the test sets: a gVisor sandbox stuck at its limit must be killed, and a
 * runc one whose kernel freed memory by killing the allocating process must not. The real case
 * (runsc at its limit) is driven in test/e2e/isolation.test.ts.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryWatchdog, isAtLimit, memoryInUse } from '../../../src/sandbox-server/runtime/docker-memory-watchdog.js';
import { logger } from '../../../src/logger.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const LIMIT = 256 * 1024 * 1024;
const STUCK = 'a'.repeat(64);
const FREED = 'b'.repeat(64);
const CACHED = 'c'.repeat(64);
const GONE = 'd'.repeat(64);

describe('the memory watchdog', () => {
  let dir: string;
  let engine: Server;
  let docker: Docker;
  /** Each container's memory usage per stats request, in the order asked; the last repeats. */
  const usage = new Map<string, { usage: number; stats: Record<string, number> }[]>();
  const statsAsked = new Map<string, number>();
  const killed: string[] = [];

  beforeAll(async () => {
    dir = await makeTempDir();
    const socketPath = join(dir, 'docker.sock');
    engine = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://engine').pathname;
      const [, id, verb] = /\/containers\/([^/]+)\/(stats|kill)$/.exec(path) ?? [];
      const readings = usage.get(id ?? '');
      if (!id || !readings) return response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'No such container' }));
      if (verb === 'kill') {
        killed.push(id);
        return response.writeHead(204).end();
      }
      const asked = statsAsked.get(id) ?? 0;
      statsAsked.set(id, asked + 1);
      const reading = readings[Math.min(asked, readings.length - 1)]!;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ memory_stats: { ...reading, limit: LIMIT } }));
    });
    await new Promise<void>((resolve) => engine.listen(socketPath, resolve));
    docker = new Docker({ socketPath });
  });
  afterAll(async () => {
    await new Promise((resolve) => engine?.close(resolve));
    await removeDir(dir);
  });

  it('counts memory as docker stats does: usage less the inactive file cache (cgroup v1 or v2 names)', () => {
    expect(memoryInUse({ usage: LIMIT, limit: LIMIT, stats: { total_inactive_file: LIMIT / 2 } as Docker.MemoryStats['stats'] })).toEqual({ inUse: LIMIT / 2, limit: LIMIT });
    expect(memoryInUse({ usage: LIMIT, limit: LIMIT, stats: { inactive_file: LIMIT / 4 } as Docker.MemoryStats['stats'] })).toEqual({ inUse: LIMIT * 0.75, limit: LIMIT });
    expect(memoryInUse({ usage: 0, limit: LIMIT })).toBeNull();
    expect(memoryInUse(undefined)).toBeNull();
  });

  it('takes a container within 1% of its limit, and at least within 4 MiB, as at its limit', () => {
    const MiB = 1024 * 1024;
    // Seen under gVisor stuck at 256 MiB and at 64 MiB.
    expect(isAtLimit({ inUse: 267_653_120, limit: 256 * MiB })).toBe(true);
    expect(isAtLimit({ inUse: 66_347_008, limit: 64 * MiB })).toBe(true);
    expect(isAtLimit({ inUse: 59 * MiB, limit: 64 * MiB })).toBe(false);
    expect(isAtLimit({ inUse: 2028 * MiB, limit: 2048 * MiB })).toBe(true);
    expect(isAtLimit({ inUse: 2020 * MiB, limit: 2048 * MiB })).toBe(false);
  });

  it('kills a container that stays at its limit, and leaves one whose memory fell back, one at its limit only in drop-able cache, and a gone one', async () => {
    const atLimit = { usage: LIMIT - 100_000, stats: { total_inactive_file: 0 } };
    usage.set(STUCK, [atLimit]);
    // runc: the kernel killed the hog; two readings at the limit, then memory falls back.
    usage.set(FREED, [atLimit, atLimit, { usage: LIMIT / 4, stats: {} }]);
    usage.set(CACHED, [{ usage: LIMIT, stats: { total_inactive_file: LIMIT / 3 } }]);
    const watchdog = createMemoryWatchdog({ docker, log: logger, sampleMs: 10, stuckSamples: 5, calmSamples: 3 });
    try {
      for (const id of [STUCK, FREED, CACHED, GONE]) watchdog.watch(id);
      await expect.poll(() => killed, { timeout: 5_000 }).toEqual([STUCK]);
      // Every other watch has ended: no more stats are asked.
      await expect.poll(() => [STUCK, FREED, CACHED].map((id) => statsAsked.get(id)), { timeout: 5_000 }).toEqual([5, 5, 3]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect([STUCK, FREED, CACHED].map((id) => statsAsked.get(id))).toEqual([5, 5, 3]);
      expect(killed).toEqual([STUCK]);
    } finally {
      watchdog.close();
    }
  });
});
