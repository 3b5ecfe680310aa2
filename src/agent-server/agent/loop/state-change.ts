/**
 * The runner's state changes, one typed union: each is recorded in the log as a
 * ConversationStateUpdateEvent under its key, and handed as it is to whoever listens (the registry
 * mirrors it into meta.json), so no listener parses a key and a loose value back.
 */
import { EXECUTION_STATUSES, type ExecutionStatus } from '../../../contracts/agent-server/execution-status.js';
import type { ConfirmationPolicy as RecordedConfirmationPolicy } from '../../../contracts/agent-server/conversation-requests.js';
import { ConversationStateUpdateEventSchema, type ConversationStateUpdateEvent, type Event } from '../../../events/index.js';

export type RunnerStateChange =
  | { key: 'execution_status'; value: ExecutionStatus }
  /** The policy with its defaults filled in (normalizeConfirmationPolicy). */
  | { key: 'confirmation_policy'; value: RecordedConfirmationPolicy };

export function stateUpdateEvent(change: RunnerStateChange): ConversationStateUpdateEvent {
  return ConversationStateUpdateEventSchema.parse({ kind: 'ConversationStateUpdateEvent', key: change.key, value: change.value });
}

/** The execution status `event` records, if it is such a state update. */
export function recordedExecutionStatus(event: Event): ExecutionStatus | undefined {
  if (event.kind !== 'ConversationStateUpdateEvent' || event.key !== 'execution_status') return undefined;
  const { value } = event;
  return typeof value === 'string' && (EXECUTION_STATUSES as readonly string[]).includes(value) ? (value as ExecutionStatus) : undefined;
}
