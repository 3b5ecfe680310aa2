import type { DesiredState, SandboxStatus } from '../../contracts/sandbox.js';
import type { ContainerObservation } from '../runtime/runtime.js';

/** The one idempotent step a pass takes toward the intent. */
export type Step =
  | { kind: 'none' }
  | { kind: 'create' }
  | { kind: 'start'; containerId: string }
  | { kind: 'pause'; containerId: string }
  | { kind: 'unpause'; containerId: string }
  /** Remove every container of the sandbox and its data volume; the row is then finished. */
  | { kind: 'remove'; containerIds: string[] }
  /** Remove the sandbox's containers but keep its data volume; the next pass creates a new one. */
  | { kind: 'restart'; containerIds: string[] };

export interface PlanInput {
  desired: DesiredState;
  containers: Pick<ContainerObservation, 'containerId' | 'state'>[];
  creating: boolean;
  hadContainer: boolean;
  previousStatus: SandboxStatus;
  /** A resume asked for a new generation (the sandbox was ERROR or MISSING) not yet acted on. */
  restartRequested: boolean;
  /** The container stopped because its engine went down (dockerd restarted), not on its own. */
  stoppedByEngine: boolean;
}

export function planStep(input: PlanInput): Step {
  const { desired, containers } = input;
  if (desired === 'DELETED') {
    // Removing now would race the create that is about to land; the next pass removes it.
    if (input.creating) return { kind: 'none' };
    return { kind: 'remove', containerIds: containers.map((c) => c.containerId) };
  }
  // The old generation goes first, once a create still under way has landed.
  if (input.restartRequested) {
    return input.creating ? { kind: 'none' } : { kind: 'restart', containerIds: containers.map((c) => c.containerId) };
  }
  // Two containers claiming one sandbox are reported, never guessed between.
  if (containers.length > 1) return { kind: 'none' };
  const container = containers[0];
  if (!container) {
    // Vanished containers are reported MISSING rather than silently recreated, and a create that
    // failed for good (ERROR without a container) is not retried until the intent changes.
    const mayCreate = desired === 'RUNNING' && !input.creating && !input.hadContainer && input.previousStatus !== 'ERROR';
    return mayCreate ? { kind: 'create' } : { kind: 'none' };
  }
  // The create under way starts the container it made: a start from here would race it.
  if (input.creating) return { kind: 'none' };
  const { containerId, state } = container;
  if (desired === 'PAUSED') return state === 'running' ? { kind: 'pause', containerId } : { kind: 'none' };
  switch (state) {
    case 'created':
      // A start that failed for good (the command does not exist) is not retried either.
      return input.previousStatus === 'ERROR' ? { kind: 'none' } : { kind: 'start', containerId };
    case 'paused':
      return { kind: 'unpause', containerId };
    case 'exited':
      // Resuming a sandbox whose container stopped while paused starts it again, and so does the
      // engine coming back after it stopped everything; a container that died on its own while
      // wanted running stays ERROR (restarting it would hide the crash).
      return input.previousStatus === 'PAUSED' || input.stoppedByEngine ? { kind: 'start', containerId } : { kind: 'none' };
    default:
      return { kind: 'none' };
  }
}
