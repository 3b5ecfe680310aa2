import { setTimeout as sleep } from 'node:timers/promises';

/** One agent-server is asked this often while it starts... */
const PROBE_MIN_MS = 20;
/** ...and, when many start at once, all together about once per this: 200 asks a second at most. */
const PROBE_SPACING_MS = 5;
/** Past this a probe gives up; the reconciler's own passes go on asking, less often. */
const PROBE_FOR_MS = 30_000;

/**
 * Asks the agent-servers of started sandboxes that did not answer /alive yet, closely, until they
 * do, and then calls `onAlive` (a kick): a sandbox is seen RUNNING a few milliseconds after its
 * agent-server listens, rather than at the next pass, and without a pass (an engine listing, a
 * database read) per ask.
 */
export class AliveProbes {
  readonly #probing = new Map<string, { url: string; stop: AbortController }>();

  constructor(
    private readonly check: (url: string, sessionApiKey: string) => Promise<boolean>,
    private readonly onAlive: (sandboxId: string) => void,
  ) {}

  /** Starts probing `url` for the sandbox, unless it is probed there already (a new URL replaces the old). */
  probe(sandboxId: string, url: string, sessionApiKey: string): void {
    const current = this.#probing.get(sandboxId);
    if (current?.url === url) return;
    current?.stop.abort();
    const probe = { url, stop: new AbortController() };
    this.#probing.set(sandboxId, probe);
    void this.#run(sandboxId, url, sessionApiKey, probe.stop.signal).finally(() => {
      if (this.#probing.get(sandboxId) === probe) this.#probing.delete(sandboxId);
    });
  }

  stopAll(): void {
    for (const { stop } of this.#probing.values()) stop.abort();
    this.#probing.clear();
  }

  async #run(sandboxId: string, url: string, sessionApiKey: string, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + PROBE_FOR_MS;
    while (Date.now() < deadline) {
      const waitMs = Math.max(PROBE_MIN_MS, this.#probing.size * PROBE_SPACING_MS);
      const woke = await sleep(waitMs, true, { signal, ref: false }).catch(() => false);
      if (!woke || signal.aborted) return;
      if (await this.check(url, sessionApiKey)) {
        if (!signal.aborted) this.onAlive(sandboxId);
        return;
      }
    }
  }
}
