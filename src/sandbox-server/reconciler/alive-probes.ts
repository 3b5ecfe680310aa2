import { setTimeout as sleep } from 'node:timers/promises';

/** One agent-server is asked this often in its first seconds of starting, when it is most likely to come up... */
const PROBE_FIRST_MS = 5;
const PROBE_FIRST_FOR_MS = 2_000;
/** ...then this often... */
const PROBE_MIN_MS = 20;
/** ...and, when many start at once, all together about once per this: 200 asks a second at most. */
const PROBE_SPACING_MS = 5;
/** Past this a probe gives up; the reconciler's own passes go on asking, less often. */
const PROBE_FOR_MS = 30_000;
/** How long a probe's answer stands for the pass it kicks (which runs a few milliseconds later). */
const ANSWER_FRESH_MS = 1_000;

interface Answer {
  containerId: string;
  url: string;
  at: number;
}

/**
 * Asks the agent-servers of started sandboxes that did not answer /alive yet, closely, until they
 * do, and then calls `onAlive` (a kick): a sandbox is seen RUNNING a few milliseconds after its
 * agent-server listens, rather than at the next pass, and without a pass (an engine listing, a
 * database read) per ask. The answer is kept for the pass it kicks (see `answered`), which then
 * need not ask again.
 */
export class AliveProbes {
  readonly #probing = new Map<string, { containerId: string; url: string; stop: AbortController }>();
  readonly #answers = new Map<string, Answer>();

  constructor(
    private readonly check: (url: string, sessionApiKey: string) => Promise<boolean>,
    private readonly onAlive: (sandboxId: string) => void,
  ) {}

  /**
   * Starts probing the sandbox's container at `url`, unless it is probed there already (another
   * container or URL replaces the old probe).
   */
  probe(sandboxId: string, containerId: string, url: string, sessionApiKey: string): void {
    const current = this.#probing.get(sandboxId);
    if (current?.url === url && current.containerId === containerId) return;
    current?.stop.abort();
    this.#answers.delete(sandboxId);
    const probe = { containerId, url, stop: new AbortController() };
    this.#probing.set(sandboxId, probe);
    void this.#run(sandboxId, probe, sessionApiKey).finally(() => {
      if (this.#probing.get(sandboxId) === probe) this.#probing.delete(sandboxId);
    });
  }

  /** Whether a probe of the sandbox is under way (it will call `onAlive` when it is answered). */
  probing(sandboxId: string): boolean {
    return this.#probing.has(sandboxId);
  }

  /**
   * Whether the sandbox's agent-server answered a probe of this container at this URL within the
   * last ANSWER_FRESH_MS: the observation a pass would otherwise make by asking again. An answer
   * counts for one pass only; later passes ask for themselves.
   */
  answered(sandboxId: string, containerId: string, url: string): boolean {
    const answer = this.#answers.get(sandboxId);
    this.#answers.delete(sandboxId);
    return answer !== undefined && answer.containerId === containerId && answer.url === url && Date.now() - answer.at <= ANSWER_FRESH_MS;
  }

  stopAll(): void {
    for (const { stop } of this.#probing.values()) stop.abort();
    this.#probing.clear();
    this.#answers.clear();
  }

  async #run(sandboxId: string, probe: { containerId: string; url: string; stop: AbortController }, sessionApiKey: string): Promise<void> {
    const { signal } = probe.stop;
    const began = Date.now();
    while (Date.now() - began < PROBE_FOR_MS) {
      const ownMs = Date.now() - began < PROBE_FIRST_FOR_MS ? PROBE_FIRST_MS : PROBE_MIN_MS;
      const waitMs = Math.max(ownMs, this.#probing.size * PROBE_SPACING_MS);
      const woke = await sleep(waitMs, true, { signal, ref: false }).catch(() => false);
      if (!woke || signal.aborted) return;
      if (await this.check(probe.url, sessionApiKey)) {
        if (signal.aborted) return;
        this.#forgetStaleAnswers();
        this.#answers.set(sandboxId, { containerId: probe.containerId, url: probe.url, at: Date.now() });
        this.onAlive(sandboxId);
        return;
      }
    }
  }

  /** Answers no pass took (a pass had seen the agent-server itself meanwhile) are dropped. */
  #forgetStaleAnswers(): void {
    for (const [sandboxId, answer] of this.#answers) if (Date.now() - answer.at > ANSWER_FRESH_MS) this.#answers.delete(sandboxId);
  }
}
