import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../logger.js';
import type { EgressDenial } from './proxy.js';

/** Seconds between two `sandbox.egress_denied` events of one sandbox: a tunnel's thousand queries make one event, not a thousand. */
export const DENIED_EVENT_INTERVAL_MS = 10_000;
/** How many denied targets one event names; the count covers the rest. */
const NAMED_TARGETS = 5;

export interface DenialsOptions {
  registry: Registry;
  /** Records a `sandbox.egress_denied` event for the sandbox saying what was denied. */
  recordEvent: (sandboxId: string, detail: string) => Promise<void>;
  intervalMs?: number;
  log: Logger;
}

interface Pending {
  count: number;
  targets: string[];
  timer: NodeJS.Timeout | undefined;
  lastEventAt: number;
}

/**
 * Counts every denied attempt per sandbox (`sandbox_egress_denied_total{sandbox_id,via}`) and
 * turns them into lifecycle events at most once per interval per sandbox: the first denial of a
 * quiet sandbox is recorded at once, later ones are gathered into the next event.
 */
export class EgressDenials {
  readonly #options: DenialsOptions;
  readonly #counter: Counter<'sandbox_id' | 'via'>;
  readonly #pending = new Map<string, Pending>();

  constructor(options: DenialsOptions) {
    this.#options = options;
    this.#counter = new Counter({
      name: 'sandbox_egress_denied_total',
      help: 'Connections, DNS questions and packets of allowlist sandboxes their egress policy refused, by sandbox and by what refused them (proxy, dns, packet)',
      labelNames: ['sandbox_id', 'via'],
      registers: [options.registry],
    });
  }

  /** One denial (or `count` of them, as a packet counter reports). */
  add(denial: EgressDenial, count = 1): void {
    this.#counter.inc({ sandbox_id: denial.sandboxId, via: denial.via }, count);
    const pending = this.#pending.get(denial.sandboxId) ?? { count: 0, targets: [], timer: undefined, lastEventAt: 0 };
    this.#pending.set(denial.sandboxId, pending);
    pending.count += count;
    const target = `${denial.target} (${denial.via}: ${denial.reason})`;
    if (pending.targets.length < NAMED_TARGETS && !pending.targets.includes(target)) pending.targets.push(target);
    if (pending.timer) return;
    const wait = Math.max(0, pending.lastEventAt + (this.#options.intervalMs ?? DENIED_EVENT_INTERVAL_MS) - Date.now());
    pending.timer = setTimeout(() => void this.#flush(denial.sandboxId), wait);
  }

  /** Forgets a sandbox that is gone: its series leave the metrics. */
  forget(sandboxId: string): void {
    clearTimeout(this.#pending.get(sandboxId)?.timer);
    this.#pending.delete(sandboxId);
    for (const via of ['proxy', 'dns', 'packet']) this.#counter.remove({ sandbox_id: sandboxId, via });
  }

  close(): void {
    for (const pending of this.#pending.values()) clearTimeout(pending.timer);
  }

  async #flush(sandboxId: string): Promise<void> {
    const pending = this.#pending.get(sandboxId);
    if (!pending) return;
    const { count, targets } = pending;
    Object.assign(pending, { count: 0, targets: [], timer: undefined, lastEventAt: Date.now() });
    const detail = `${count} denied: ${targets.join('; ')}`;
    await this.#options.recordEvent(sandboxId, detail).catch((err: unknown) => this.#options.log.warn({ err, sandboxId }, 'could not record an egress_denied event'));
  }
}
