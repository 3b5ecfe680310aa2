import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { logger } from '../../../src/logger.js';
import { acquireLease, releaseLease } from '../../../src/sandbox-server/replicas/lease.js';
import { LeaseKeeper } from '../../../src/sandbox-server/replicas/lease-keeper.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';

describe.each(testDrivers)('leases (%s)', (driver) => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await handle.close();
  });

  it('is held by one holder at a time, renewed by it, and taken over only once expired', async () => {
    const name = 'test/expiry';
    expect(await acquireLease(handle.db, name, 'a', 400)).toBe(true);
    expect(await acquireLease(handle.db, name, 'b', 400)).toBe(false);
    expect(await acquireLease(handle.db, name, 'a', 400)).toBe(true);
    // Once a stops renewing, b gets it when it expires, and a no longer does.
    await vi.waitFor(async () => expect(await acquireLease(handle.db, name, 'b', 60_000)).toBe(true), { timeout: 10_000, interval: 50 });
    expect(await acquireLease(handle.db, name, 'a', 400)).toBe(false);
  });

  it('is free at once when its holder releases it, and a release by another holder changes nothing', async () => {
    const name = 'test/release';
    expect(await acquireLease(handle.db, name, 'a', 60_000)).toBe(true);
    await releaseLease(handle.db, name, 'b');
    expect(await acquireLease(handle.db, name, 'b', 60_000)).toBe(false);
    await releaseLease(handle.db, name, 'a');
    expect(await acquireLease(handle.db, name, 'b', 60_000)).toBe(true);
  });

  it('goes to exactly one of many holders asking at once', async () => {
    const holders = Array.from({ length: 8 }, (_, i) => `racer-${i}`);
    const won = await Promise.all(holders.map((holder) => acquireLease(handle.db, 'test/race', holder, 60_000)));
    expect(won.filter(Boolean)).toHaveLength(1);
  });

  it('keepers: one of two does the job; when it stops, the other takes over', async () => {
    const log = logger.child({ test: 'lease-keeper' });
    const doing = new Set<string>();
    const transitions: string[] = [];
    const keeper = (holder: string) =>
      new LeaseKeeper({
        db: handle.db,
        name: 'test/keepers',
        holder,
        ttlMs: 3_000,
        log,
        onAcquired: async () => {
          expect(doing.size).toBe(0);
          doing.add(holder);
          transitions.push(`${holder} acquired`);
        },
        onLost: async () => {
          doing.delete(holder);
          transitions.push(`${holder} lost`);
        },
      });
    const [first, second] = [keeper('first'), keeper('second')];
    await first.start();
    await second.start();
    expect([first.held, second.held]).toEqual([true, false]);
    // Renewals keep it with the first, well past its time to live.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect([first.held, second.held]).toEqual([true, false]);

    await first.stop();
    await vi.waitFor(() => expect(second.held).toBe(true), { timeout: 10_000, interval: 20 });
    await second.stop();
    expect(transitions).toEqual(['first acquired', 'first lost', 'second acquired', 'second lost']);
  });

  it('keepers: a holder that died unreleased is replaced once its lease expires', async () => {
    expect(await acquireLease(handle.db, 'test/dead', 'dead replica', 500)).toBe(true);
    let acquired = false;
    const survivor = new LeaseKeeper({
      db: handle.db,
      name: 'test/dead',
      holder: 'survivor',
      ttlMs: 600,
      log: logger.child({ test: 'lease-keeper' }),
      onAcquired: async () => {
        acquired = true;
      },
      onLost: async () => {},
    });
    await survivor.start();
    await vi.waitFor(() => expect(acquired).toBe(true), { timeout: 10_000, interval: 20 });
    await survivor.stop();
  });
});
