import type { Event } from '../../events/index.js';
import { textOf } from '../agent/loop/llm-view.js';

/**
 * What the agent last answered, if `event` is such an answer: the message of its finish action,
 * or the text of a message it wrote. OpenHands' agent_final_response reads the newest one.
 */
export function agentAnswerOf(event: Event): string | undefined {
  if (event.kind === 'ActionEvent' && event.action?.kind === 'FinishAction') return event.action.message;
  if (event.kind === 'MessageEvent' && event.source === 'agent') return textOf(event.llm_message.content);
  return undefined;
}
