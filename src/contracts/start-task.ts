import type { ErrorCode } from '../errors/index.js';

/** OpenHands' AppConversationStartTaskStatus: where the job behind POST /app-conversations is. */
export const START_TASK_STATUSES = [
  'WORKING',
  'WAITING_FOR_SANDBOX',
  'PREPARING_REPOSITORY',
  'RUNNING_SETUP_SCRIPT',
  'SETTING_UP_GIT_HOOKS',
  'SETTING_UP_SKILLS',
  'STARTING_CONVERSATION',
  'READY',
  'ERROR',
] as const;
export type StartTaskStatus = (typeof START_TASK_STATUSES)[number];

/**
 * The error code a start task ended in ERROR with, so `?wait=true` can fail the same way; any
 * other failure counts as `upstream`.
 */
export const START_TASK_FAILURES = ['not_found', 'conflict', 'unavailable', 'upstream'] as const satisfies readonly ErrorCode[];
export type StartTaskFailure = (typeof START_TASK_FAILURES)[number];
