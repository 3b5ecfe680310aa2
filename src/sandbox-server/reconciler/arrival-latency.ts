import type { SandboxRow } from '../db/schema.js';
import type { SandboxMetrics } from '../../http/metrics/index.js';

/**
 * Start latency runs from the sandbox's creation, resume latency from the request to resume
 * (the last write of the row before the reconciler saw it), both to the first RUNNING.
 */
export function observeArrival(metrics: SandboxMetrics | undefined, row: SandboxRow, status: string, now: number): void {
  if (status !== 'RUNNING' || row.status === 'RUNNING') return;
  if (row.status === 'STARTING') metrics?.observeStart((now - row.createdAt.getTime()) / 1000);
  if (row.status === 'PAUSED') metrics?.observeResume((now - row.updatedAt.getTime()) / 1000);
}
