import type { Logger } from '../../logger.js';
import type { DatabaseHandle } from '../db/client.js';
import { LeaseKeeper } from '../replicas/lease-keeper.js';
import type { Component } from './component.js';

/**
 * The reconciler's lease lasts this long unrenewed (renewed every third of it): a replica that dies
 * holding it is replaced within this plus one renewal interval.
 */
export const LEASE_TTL_MS = 6_000;
/**
 * The replica-wide jobs run by one replica at a time: app-conversation start tasks and the warm
 * pools' top-ups (one planner for all engines). Each engine's reconciler has a lease of its own.
 */
export const CONTROL_PLANE_LEASE = 'control-plane';

/** A job that runs only while this replica holds the control-plane lease. */
export interface ReplicaWideJob {
  start(): unknown;
  stop(): Promise<void>;
}

/**
 * The control-plane lease: the replica holding it runs the replica-wide jobs (started in order when
 * it is won, stopped in reverse when it is lost or given up); the others hand them work over NOTIFY.
 */
export function controlPlaneLease(database: DatabaseHandle, replica: string, jobs: readonly ReplicaWideJob[], log: Logger): LeaseKeeper {
  return new LeaseKeeper({
    db: database.db,
    name: CONTROL_PLANE_LEASE,
    holder: replica,
    ttlMs: LEASE_TTL_MS,
    log,
    // Start tasks left unfinished, by a previous run or the previous holder, carry on.
    onAcquired: async () => {
      for (const job of jobs) await job.start();
    },
    onLost: async () => {
      for (const job of [...jobs].reverse()) await job.stop();
    },
  });
}

/** Seeks the lease in the background (a replica that does not win it keeps serving), and gives it up on stop. */
export function controlPlaneLeaseComponent(lease: LeaseKeeper, log: Logger): Component {
  return {
    name: 'control-plane lease',
    start: async () => void lease.start().catch((err: unknown) => log.error({ err }, 'control-plane lease could not be sought')),
    stop: () => lease.stop(),
  };
}
