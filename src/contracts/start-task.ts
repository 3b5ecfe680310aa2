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

/** Why a start task ended in ERROR, so `?wait=true` can answer with a fitting status. */
export const START_TASK_FAILURES = ['not_found', 'conflict', 'upstream', 'timeout'] as const;
export type StartTaskFailure = (typeof START_TASK_FAILURES)[number];
