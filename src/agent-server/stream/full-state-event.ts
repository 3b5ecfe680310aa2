import { randomUUID } from 'node:crypto';
import { nowTimestamp } from '../../events/timestamp.js';

/** The first frame of every stream: the whole conversation state. It is not stored in the log. */
export function fullStateEvent(state: unknown) {
  return {
    kind: 'ConversationStateUpdateEvent',
    id: randomUUID(),
    timestamp: nowTimestamp(),
    source: 'environment',
    key: 'full_state',
    value: state,
  } as const;
}
