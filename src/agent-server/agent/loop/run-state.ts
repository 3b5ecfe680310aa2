/**
 * The loop's state, read back from the events it recorded, so that a runner created over an
 * existing log (after a restart) carries on exactly where the last one stopped.
 */
import type { ExecutionStatus } from '../../../contracts/agent-server/execution-status.js';
import type { ActionEvent, Event } from '../../../events/index.js';
import { recordedExecutionStatus } from './state-change.js';

/** Index of the last recorded execution status change, or -1. */
function lastStatusIndex(history: readonly Event[]): number {
  return history.findLastIndex((event) => recordedExecutionStatus(event) !== undefined);
}

/**
 * The last recorded status; `idle` for a new conversation. A `running` read back means the process
 * stopped while the loop ran: `run()` then resumes that run.
 */
export function recordedStatus(history: readonly Event[]): ExecutionStatus {
  const event = history[lastStatusIndex(history)];
  return (event && recordedExecutionStatus(event)) ?? 'idle';
}

/** True when a user wrote after the last status change (after the agent finished, say). */
export function hasUserMessageSinceStatusChange(history: readonly Event[]): boolean {
  return history.slice(lastStatusIndex(history) + 1).some((event) => event.kind === 'MessageEvent' && event.source === 'user');
}

/**
 * LLM steps of the current run: responses of the agent (its actions and messages, one
 * `llm_response_id` each) and condensations since the run last started.
 */
export function iterationsOfCurrentRun(history: readonly Event[]): number {
  const start = history.findLastIndex((event) => recordedExecutionStatus(event) === 'running');
  const responses = new Set<string>();
  let condensations = 0;
  for (const event of history.slice(start + 1)) {
    if (event.kind === 'Condensation') condensations++;
    else if (event.kind === 'ActionEvent') responses.add(event.llm_response_id);
    else if (event.kind === 'MessageEvent' && event.source === 'agent' && event.llm_response_id !== null) responses.add(event.llm_response_id);
  }
  return responses.size + condensations;
}

/**
 * Executable actions with no result yet, in order: waiting for confirmation, or left over by a
 * pause or a crash in the middle of a response's calls. Observations and rejections name their
 * action; an AgentErrorEvent only the tool call id, which some models reuse across responses, so
 * it answers the latest unanswered action with that id.
 */
export function pendingActions(history: readonly Event[]): ActionEvent[] {
  const pending = new Map<string, ActionEvent>();
  for (const event of history) {
    if (event.kind === 'ActionEvent' && event.action !== null) pending.set(event.id, event);
    else if (event.kind === 'ObservationEvent' || event.kind === 'UserRejectObservation') pending.delete(event.action_id);
    else if (event.kind === 'AgentErrorEvent') {
      const answered = [...pending.values()].findLast((action) => action.tool_call_id === event.tool_call_id);
      if (answered) pending.delete(answered.id);
    }
  }
  return [...pending.values()];
}
