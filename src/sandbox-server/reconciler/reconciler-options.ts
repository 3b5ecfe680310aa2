import type { Database } from '../db/client.js';
import type { SandboxMetrics } from '../../http/metrics/index.js';
import type { SandboxRuntime } from '../runtime/runtime.js';
import type { AskAgentIdleMs } from './agent-idle.js';

export interface ReconcilerOptions {
  db: Database;
  /** The engine this reconciler converges: only sandboxes and snapshots placed on it are its own. Default `local`. */
  engine?: string;
  /** Where that engine publishes sandbox ports. Default 127.0.0.1. */
  advertiseHost?: string;
  /**
   * Told when the engine stops answering (healthy false, with why) and when it answers again, and
   * every 30 s while it answers (engine-health.ts); a rejection makes it told again after the next pass.
   */
  onHealth?: (healthy: boolean, detail: string | null) => Promise<void>;
  runtime: SandboxRuntime;
  /** Only containers carrying this instance label are ours (the runtime filters by it). */
  instanceId: string;
  /**
   * This installation's id (the runtime labels what it makes with it): sweeps remove only its own
   * leftovers and those of the installations it adopted. Unset (tests), resources carrying no
   * installation are its own.
   */
  installationId?: string;
  /** Sweep of every sandbox, besides kicks and runtime events. Default 5 s. */
  intervalMs?: number;
  /** How long a container no live row claims is left alone before it is removed. Default 60 s. */
  orphanGraceMs?: number;
  /** Whether the agent-server at `url` (its base URL) answers; default GET <url>/alive. */
  checkAlive?: (url: string, sessionApiKey: string) => Promise<boolean>;
  /** How long a sandbox's agent did no work, asked before idle auto-pause; default its /server_info idle_time. */
  askAgentIdle?: AskAgentIdleMs;
  /** Where the sandbox's data volume is mounted; the agent-server's --data-dir. Default /data. */
  dataMountPath?: string;
  /** Pass durations, failures, and start / resume latencies, for /metrics. */
  metrics?: SandboxMetrics;
  /** A running sandbox whose agent-server does not answer /alive for this long is ERROR. Default 300 s. */
  startTimeoutMs?: number;
  /** How often running sandboxes with a disk limit are measured (disk-watch.ts). Default 10 s. */
  diskCheckIntervalMs?: number;
}
