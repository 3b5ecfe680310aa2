import type { StartTaskStatus } from '../../contracts/start-task.js';
import type { StartTaskRow } from '../db/schema.js';
import type { NewLifecycleEvent } from './record-event.js';
import { startTaskEventType } from '../../contracts/lifecycle-event.js';

/** The event of a start task reaching its current status from `previous` (null: just created). */
export function startTaskEvent(task: StartTaskRow, previous: StartTaskStatus | null): NewLifecycleEvent {
  return {
    type: startTaskEventType(task.status),
    subjectKind: 'start_task',
    subjectId: task.id,
    sandboxId: task.sandboxId,
    previousStatus: previous,
    status: task.status,
    statusDetail: task.detail,
  };
}
