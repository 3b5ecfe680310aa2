import { afterEach, describe, expect, it, vi } from 'vitest';
import { AliveProbes } from '../../../src/sandbox-server/reconciler/alive-probes.js';

describe('alive probes', () => {
  let probes: AliveProbes | undefined;
  afterEach(() => probes?.stopAll());

  it('asks a starting agent-server again and again until it answers, then reports it once', async () => {
    const asked: string[] = [];
    const alive: string[] = [];
    probes = new AliveProbes(
      async (url, key) => (asked.push(`${url} ${key}`), asked.length >= 3),
      (sandboxId) => alive.push(sandboxId),
    );
    probes.probe('sb-1', 'c-1', 'http://127.0.0.1:5001', 'key-1');
    probes.probe('sb-1', 'c-1', 'http://127.0.0.1:5001', 'key-1');
    await vi.waitFor(() => expect(alive).toEqual(['sb-1']), { timeout: 10_000, interval: 10 });
    expect(asked).toEqual(Array(3).fill('http://127.0.0.1:5001 key-1'));
  });

  it('follows a sandbox to its new URL, and stops asking when stopped', async () => {
    const asked: string[] = [];
    const alive: string[] = [];
    probes = new AliveProbes(
      async (url) => (asked.push(url), url.endsWith(':5003')),
      (sandboxId) => alive.push(sandboxId),
    );
    probes.probe('sb-2', 'c-2', 'http://127.0.0.1:5002', 'key');
    await vi.waitFor(() => expect(asked.length).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
    probes.probe('sb-2', 'c-2', 'http://127.0.0.1:5003', 'key');
    await vi.waitFor(() => expect(alive).toEqual(['sb-2']), { timeout: 10_000, interval: 10 });

    probes.probe('sb-3', 'c-3', 'http://127.0.0.1:5004', 'key');
    await vi.waitFor(() => expect(asked).toContain('http://127.0.0.1:5004'), { timeout: 10_000, interval: 10 });
    probes.stopAll();
    const asksWhenStopped = asked.length;
    // A second probe of another sandbox, asked as often, shows time passing without sb-3 being asked.
    const later: string[] = [];
    const other = new AliveProbes(async () => (later.push('x'), later.length >= 3), () => undefined);
    other.probe('sb-4', 'c-4', 'http://127.0.0.1:5005', 'key');
    await vi.waitFor(() => expect(later).toHaveLength(3), { timeout: 10_000, interval: 10 });
    expect(asked).toHaveLength(asksWhenStopped);
    expect(alive).toEqual(['sb-2']);
  });

  it('keeps its answer for one pass, of the container and URL it asked', async () => {
    const alive: string[] = [];
    probes = new AliveProbes(async () => true, (sandboxId) => alive.push(sandboxId));
    expect(probes.answered('sb-5', 'c-5', 'http://127.0.0.1:5006')).toBe(false);

    probes.probe('sb-5', 'c-5', 'http://127.0.0.1:5006', 'key');
    expect(probes.probing('sb-5')).toBe(true);
    await vi.waitFor(() => expect(alive).toEqual(['sb-5']), { timeout: 10_000, interval: 10 });
    expect(probes.probing('sb-5')).toBe(false);
    expect(probes.answered('sb-5', 'c-other', 'http://127.0.0.1:5006')).toBe(false);

    probes.probe('sb-5', 'c-5', 'http://127.0.0.1:5006', 'key');
    await vi.waitFor(() => expect(alive).toEqual(['sb-5', 'sb-5']), { timeout: 10_000, interval: 10 });
    expect(probes.answered('sb-5', 'c-5', 'http://127.0.0.1:5007')).toBe(false);

    probes.probe('sb-5', 'c-5', 'http://127.0.0.1:5006', 'key');
    await vi.waitFor(() => expect(alive).toHaveLength(3), { timeout: 10_000, interval: 10 });
    expect(probes.answered('sb-5', 'c-5', 'http://127.0.0.1:5006')).toBe(true);
    expect(probes.answered('sb-5', 'c-5', 'http://127.0.0.1:5006')).toBe(false);
  });
});
