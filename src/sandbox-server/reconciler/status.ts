import type { DesiredState, SandboxStatus } from '../../contracts/sandbox.js';
import type { ContainerObservation } from '../runtime/runtime.js';

export interface StatusInput {
  desired: DesiredState;
  /** The sandbox's container as it is after this pass's step; null when there is none. */
  container: Pick<ContainerObservation, 'state' | 'exitCode' | 'oomKilled'> | null;
  /** The agent-server answered GET /alive (only asked while the container runs). */
  alive: boolean;
  /** A create for this sandbox may still land. */
  creating: boolean;
  /** What that create last reported of itself (an image pull's progress); absent, "creating container". */
  createProgress?: string;
  /** The row remembers a container id: a container existed, so "none" means it vanished. */
  hadContainer: boolean;
  /** What the row said before this pass. */
  previous: { status: SandboxStatus; detail: string | null };
  /** A final failure seen in this pass (rejected create, two containers claiming the sandbox). */
  failure: string | null;
  /** A retryable failure of this pass's step; the status stays, the detail says why it lags. */
  retrying: string | null;
}

/** The detail of a sandbox whose container runs while its agent-server does not answer yet. */
export const WAITING_FOR_ALIVE = 'waiting for the agent-server to answer /alive';

/** How the detail of a sandbox the disk watchdog stopped (disk-watch.ts) begins. */
export const DISK_LIMIT_EXCEEDED = 'disk limit exceeded';

export interface ObservedStatus {
  status: SandboxStatus;
  detail: string | null;
}

/**
 * Maps what the runtime shows to a SandboxStatus. OpenHands' table, with two corrections: RUNNING
 * only once the agent-server answers, and a container that exits while wanted running is ERROR
 * (with its exit code), not PAUSED.
 */
export function computeStatus(input: StatusInput): ObservedStatus {
  const status = baseStatus(input);
  if (input.retrying && status.status !== 'ERROR') return { status: status.status, detail: `will retry: ${input.retrying}` };
  return status;
}

function baseStatus(input: StatusInput): ObservedStatus {
  if (input.failure) return { status: 'ERROR', detail: input.failure };
  const { container, desired } = input;
  if (!container) {
    if (input.creating) return { status: 'STARTING', detail: input.createProgress ?? 'creating container' };
    if (desired === 'DELETED') return { status: 'MISSING', detail: 'deleted' };
    // A create that failed for good stays failed until the intent changes (pause and resume, delete),
    // also when it made a container and removed it again (an image the agent cannot run in).
    if (desired === 'RUNNING' && input.previous.status === 'ERROR') return input.previous;
    if (input.hadContainer) return { status: 'MISSING', detail: 'container was removed outside the control plane' };
    // Paused before it ever started: nothing runs, and resuming creates it.
    if (desired === 'PAUSED') return { status: 'PAUSED', detail: null };
    return { status: 'STARTING', detail: null };
  }
  switch (container.state) {
    case 'running':
      if (input.alive) return { status: 'RUNNING', detail: null };
      // Given up on (it never answered in time): it stays ERROR until it answers after all.
      if (input.previous.status === 'ERROR') return input.previous;
      return { status: 'STARTING', detail: WAITING_FOR_ALIVE };
    case 'paused':
      return { status: 'PAUSED', detail: null };
    case 'created':
      if (desired === 'PAUSED') return { status: 'PAUSED', detail: null };
      // Created but never started: a start that failed for good stays failed, like a create.
      return input.previous.status === 'ERROR' ? input.previous : { status: 'STARTING', detail: null };
    case 'restarting':
      return { status: 'STARTING', detail: 'container is restarting' };
    case 'removing':
      return { status: 'MISSING', detail: 'container is being removed' };
    case 'exited':
      // Stopped by the disk watchdog, which wrote why before it killed the container.
      if (desired === 'RUNNING' && input.previous.status === 'ERROR' && input.previous.detail?.startsWith(DISK_LIMIT_EXCEEDED)) return input.previous;
      if (desired === 'RUNNING' && container.oomKilled) return { status: 'ERROR', detail: 'out of memory' };
      if (desired === 'RUNNING') return { status: 'ERROR', detail: `container exited with code ${container.exitCode ?? 'unknown'}` };
      return { status: 'PAUSED', detail: `container stopped with code ${container.exitCode ?? 'unknown'}; resuming starts it again` };
    case 'dead':
      return { status: 'ERROR', detail: 'container is dead' };
  }
}
