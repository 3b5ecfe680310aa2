import { RuntimeError } from '../runtime/runtime.js';

interface CreateRecord {
  startedAt: number;
  settledAt?: number;
  containerId?: string;
  error?: RuntimeError;
  /** What it last reported while under way (an image pull's progress). */
  progress?: string;
}

/** What a pass should believe about creates it cannot see in its listing. */
export interface CreateView {
  /** A create may still land (or has landed after the listing was taken): do not create again. */
  creating: boolean;
  /** A create landed before the listing, yet the listing lacks it: it was removed since. */
  landedContainerId?: string;
  /** The create failed since the last pass. */
  error?: RuntimeError;
  /** While creating: what the create last reported (an image pull's progress), if anything. */
  progress?: string;
}

/**
 * Remembers creates for a bounded time, so that a pass working from a listing taken before a
 * create landed does not create a second container. (The Docker driver's deterministic container
 * name would refuse the second one anyway; this spares the attempt, and covers runtimes that do not
 * have such names.) After `boundMs` a create that never settled is forgotten, so a hung engine call
 * cannot block a sandbox forever.
 */
export class CreatesInFlight {
  private readonly records = new Map<string, CreateRecord>();

  constructor(private readonly boundMs: number) {}

  begin(sandboxId: string, now: number): void {
    this.records.set(sandboxId, { startedAt: now });
  }

  /** What the create under way for the sandbox reports of itself now. */
  progress(sandboxId: string, line: string): void {
    const record = this.records.get(sandboxId);
    if (record && record.settledAt === undefined) record.progress = line;
  }

  settle(sandboxId: string, now: number, outcome: { containerId: string } | { error: RuntimeError }): void {
    const record = this.records.get(sandboxId);
    if (!record) return;
    record.settledAt = now;
    if ('error' in outcome) record.error = outcome.error;
    else record.containerId = outcome.containerId;
  }

  /**
   * Consults (and retires) the record for a sandbox whose containers were listed at `listedAt`. A
   * listed container whose create has not settled is still the create's: it starts it itself.
   */
  view(sandboxId: string, listedAt: number, now: number, listed: boolean): CreateView {
    const record = this.records.get(sandboxId);
    if (!record) return { creating: false };
    if (listed && record.settledAt === undefined && now - record.startedAt < this.boundMs) return creatingView(record);
    if (listed) {
      this.records.delete(sandboxId);
      return { creating: false };
    }
    if (record.error) {
      this.records.delete(sandboxId);
      return { creating: false, error: record.error };
    }
    if (record.settledAt === undefined) {
      if (now - record.startedAt < this.boundMs) return creatingView(record);
      this.records.delete(sandboxId);
      return { creating: false };
    }
    if (record.settledAt >= listedAt) return { creating: true };
    this.records.delete(sandboxId);
    return { creating: false, landedContainerId: record.containerId };
  }
}

function creatingView(record: CreateRecord): CreateView {
  return record.progress === undefined ? { creating: true } : { creating: true, progress: record.progress };
}
