/** How spare networks are refilled when the engine refuses to make one, with a stand-in for the engine's network create. */
import Docker from 'dockerode';
import { describe, expect, it, vi } from 'vitest';
import { logger } from '../../../src/logger.js';
import { SpareNetworks } from '../../../src/sandbox-server/runtime/docker-spare-networks.js';

function sparesWith(createNetwork: () => Promise<string>): SpareNetworks {
  // The engine client is only used to remove networks, which these tests never do.
  return new SpareNetworks({ docker: new Docker({ socketPath: '/nonexistent.sock' }), owner: { 'sandbox-server.instance': 'fill-test' }, target: 2, createNetwork, log: logger });
}

describe('refilling spare networks', () => {
  it('tries a failed create again, so the spares are made after a refusal', async () => {
    let calls = 0;
    const spares = sparesWith(async () => {
      calls++;
      if (calls <= 2) throw new Error('Pool overlaps with other one on this address space');
      return `network-${calls}`;
    });
    spares.fill('internet');
    await vi.waitFor(() => expect(calls).toBe(4), { timeout: 10_000, interval: 20 });
    expect([spares.take('a', 'internet'), spares.take('b', 'internet'), spares.take('c', 'internet')]).toEqual([
      expect.stringMatching(/^sandbox-server-spare-/),
      expect.stringMatching(/^sandbox-server-spare-/),
      undefined,
    ]);
  });

  it('gives up after five refusals in a row until the next fill is asked for', async () => {
    let calls = 0;
    const spares = sparesWith(async () => {
      calls++;
      throw new Error('engine unreachable');
    });
    spares.fill('none');
    await vi.waitFor(() => expect(calls).toBe(5), { timeout: 10_000, interval: 20 });
    // The give-up is logged and the fill ends; another fill starts over.
    await vi.waitFor(() => {
      spares.fill('none');
      expect(calls).toBeGreaterThan(5);
    }, { timeout: 10_000, interval: 50 });
    expect(spares.take('a', 'none')).toBeUndefined();
  });
});
