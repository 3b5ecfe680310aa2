import { eq, type SQL } from 'drizzle-orm';
import type { StartTaskStatus } from '../../../contracts/start-task.js';
import { appConversationStartTasks } from '../../db/schema.js';

export function statusCondition(status: StartTaskStatus | undefined): SQL[] {
  return status ? [eq(appConversationStartTasks.status, status)] : [];
}
