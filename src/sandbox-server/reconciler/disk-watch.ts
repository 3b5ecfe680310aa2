import { and, eq } from 'drizzle-orm';
import type { Logger } from 'pino';
import { sandboxEventType } from '../../contracts/lifecycle-event.js';
import type { Database } from '../db/client.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes } from '../db/schema.js';
import { recordEvent } from '../lifecycle-events/record-event.js';
import type { ContainerObservation, DiskUsage, SandboxRuntime } from '../runtime/runtime.js';
import { DISK_LIMIT_EXCEEDED } from './status.js';

const MB = 1024 * 1024;

/**
 * Why a sandbox over its disk limit was stopped, or null when it is within it. The writable layer
 * and the data volume count together, as E2B and Daytona give a sandbox one disk.
 */
export function diskVerdict(usage: DiskUsage, limitMb: number): string | null {
  const total = usage.writableBytes + (usage.dataBytes ?? 0);
  if (total <= limitMb * MB) return null;
  const mb = (bytes: number) => Math.ceil(bytes / MB).toLocaleString('en-US');
  const data = usage.dataBytes === null ? 'not counted: its image has no du' : `${mb(usage.dataBytes)} MB`;
  return (
    `${DISK_LIMIT_EXCEEDED}: it held ${mb(total)} MB (writable layer ${mb(usage.writableBytes)} MB, data volume ${data}) ` +
    `of its ${limitMb.toLocaleString('en-US')} MB (disk_mb), so it was stopped; resuming starts a new container on the same data volume`
  );
}

export interface DiskWatchOptions {
  db: Database;
  runtime: Pick<SandboxRuntime, 'diskUsage' | 'stop'>;
  dataMountPath: string;
  /** How often every running sandbox with a disk limit is measured. */
  intervalMs: number;
  /** Runs `work` with no reconcile pass under way, so that none writes over what it writes. */
  exclusive: (work: () => Promise<void>) => Promise<void>;
  /** Told after a sandbox was stopped and its status written. */
  stopped: (sandboxId: string) => void;
  log: Logger;
}

interface Candidate {
  row: SandboxRow;
  limitMb: number;
  containerId: string;
}

/**
 * The disk limit's watchdog: every `intervalMs`, measures each RUNNING sandbox with a `disk_mb`,
 * one after the other, in the background (a `du` can take a while), and stops each one over its
 * limit, ERROR with a status_detail saying why. A watchdog, not a quota: a sandbox can overshoot
 * by what it writes between two measurements.
 */
export class DiskWatch {
  private lastStartedAt = 0;
  private running: Promise<void> | undefined;

  constructor(private readonly options: DiskWatchOptions) {}

  /** Starts a round over `entries` if one is due and none is under way. */
  maybeCheck(entries: readonly { row: SandboxRow; spec: SandboxSpecRow | undefined }[], containers: Map<string, ContainerObservation[]>): void {
    if (this.running || Date.now() - this.lastStartedAt < this.options.intervalMs) return;
    const candidates = entries.flatMap(({ row, spec }): Candidate[] => {
      const [container, ...others] = containers.get(row.id) ?? [];
      const watched = spec?.diskMb != null && row.desiredState === 'RUNNING' && row.status === 'RUNNING' && container?.state === 'running' && others.length === 0;
      return watched ? [{ row, limitMb: spec.diskMb as number, containerId: container.containerId }] : [];
    });
    if (candidates.length === 0) return;
    this.lastStartedAt = Date.now();
    this.running = this.round(candidates).finally(() => (this.running = undefined));
  }

  /** The round under way, if any (tests, and a stopping reconciler, wait for it). */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async round(candidates: Candidate[]): Promise<void> {
    for (const candidate of candidates) {
      try {
        const usage = await this.options.runtime.diskUsage(candidate.containerId, this.options.dataMountPath);
        const verdict = usage && diskVerdict(usage, candidate.limitMb);
        if (verdict) await this.options.exclusive(() => this.stop(candidate, verdict));
      } catch (error) {
        this.options.log.warn({ err: error, sandboxId: candidate.row.id }, 'could not measure the disk use of a sandbox');
      }
    }
  }

  /**
   * Writes ERROR with the reason first, then kills the container, both between passes: the pass
   * that sees the container exited finds the reason and keeps it. Only if the sandbox still runs
   * that container and is still wanted running.
   */
  private async stop({ row, containerId }: Candidate, detail: string): Promise<void> {
    const written = await this.options.db.transaction(async (tx) => {
      const [updated] = await tx
        .update(sandboxes)
        .set({ status: 'ERROR', statusDetail: detail, updatedAt: new Date() })
        .where(and(eq(sandboxes.id, row.id), eq(sandboxes.containerId, containerId), eq(sandboxes.desiredState, 'RUNNING')))
        .returning({ id: sandboxes.id });
      if (!updated) return false;
      await recordEvent(tx, {
        type: sandboxEventType('ERROR'),
        subjectKind: 'sandbox',
        subjectId: row.id,
        sandboxId: row.id,
        previousStatus: row.status,
        status: 'ERROR',
        statusDetail: detail,
      });
      return true;
    });
    if (!written) return;
    this.options.log.warn({ sandboxId: row.id, containerId }, detail);
    await this.options.runtime.stop(containerId);
    this.options.stopped(row.id);
  }
}
