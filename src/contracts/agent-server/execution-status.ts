/** OpenHands' ConversationExecutionStatus values, the agent loop's states. */
export const EXECUTION_STATUSES = [
  'idle',
  'running',
  'paused',
  'waiting_for_confirmation',
  'finished',
  'error',
  'stuck',
  'deleting',
] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
