/**
 * Whether the agent is going round in circles, as OpenHands' StuckDetector judges it, over the
 * events since the user last wrote:
 * - the same action with the same result four times in a row;
 * - the same action failing with the same error three times in a row;
 * - three agent messages in a row with nothing else between them (a monologue);
 * - two actions alternating with the same two results, six steps long.
 * Actions compare by tool and arguments, results by what they said; ids and timestamps never count.
 */
import type { Event } from '../../../events/index.js';
import { isToolResult, textOf, type ToolResultEvent } from './llm-view.js';

export type StuckPattern = 'repeating_action_observation' | 'repeating_action_error' | 'monologue' | 'alternating_action_observation';

const DESCRIPTIONS: Readonly<Record<StuckPattern, string>> = {
  repeating_action_observation: 'it repeated the same action with the same result 4 times',
  repeating_action_error: 'it repeated the same failing action 3 times',
  monologue: 'it sent 3 messages in a row without acting',
  alternating_action_observation: 'it alternated between two actions with the same results 6 times',
};

export function describeStuck(pattern: StuckPattern): string {
  return `The agent got stuck in a loop: ${DESCRIPTIONS[pattern]}.`;
}

interface Step {
  action: string;
  result: string;
  failed: boolean;
}

export function detectStuck(history: readonly Event[]): StuckPattern | null {
  const start = history.findLastIndex((event) => event.kind === 'MessageEvent' && event.source === 'user') + 1;
  const recent = history.slice(start);
  if (isMonologue(recent)) return 'monologue';
  const steps = stepsOf(recent);
  const last = (count: number): Step[] | null => (steps.length >= count ? steps.slice(-count) : null);
  const four = last(4);
  if (four && allSame(four.map((step) => step.action)) && allSame(four.map((step) => step.result))) return 'repeating_action_observation';
  const three = last(3);
  if (three && three.every((step) => step.failed) && allSame(three.map((step) => step.action)) && allSame(three.map((step) => step.result))) {
    return 'repeating_action_error';
  }
  const six = last(6);
  if (six && alternates(six.map((step) => step.action)) && alternates(six.map((step) => step.result))) return 'alternating_action_observation';
  return null;
}

/** Each action paired with its result, in order; actions still running are left out. */
function stepsOf(events: readonly Event[]): Step[] {
  const actions = new Map<string, string>();
  const steps: Step[] = [];
  for (const event of events) {
    if (event.kind === 'ActionEvent') actions.set(event.tool_call_id, `${event.tool_name} ${canonicalArguments(event.tool_call.arguments)}`);
    else if (isToolResult(event)) {
      const action = actions.get(event.tool_call_id);
      if (action !== undefined) steps.push({ action, result: resultText(event), failed: failed(event) });
    }
  }
  return steps;
}

/** Arguments compare as values, whatever order the model wrote their keys in; `summary` is a comment. */
function canonicalArguments(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return text;
    const { summary: _summary, ...rest } = value as Record<string, unknown>;
    return JSON.stringify(Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b))));
  } catch {
    return text;
  }
}

function resultText(event: ToolResultEvent): string {
  switch (event.kind) {
    case 'ObservationEvent':
      return textOf(event.observation.content);
    case 'AgentErrorEvent':
      return event.error;
    case 'UserRejectObservation':
      return event.rejection_reason;
  }
}

function failed(event: ToolResultEvent): boolean {
  return event.kind === 'AgentErrorEvent' || (event.kind === 'ObservationEvent' && event.observation.is_error === true);
}

function isMonologue(events: readonly Event[]): boolean {
  const conversational = events.filter((event) => event.kind === 'MessageEvent' || event.kind === 'ActionEvent' || isToolResult(event));
  const tail = conversational.slice(-3);
  return tail.length === 3 && tail.every((event) => event.kind === 'MessageEvent' && event.source === 'agent');
}

function allSame(values: readonly string[]): boolean {
  return values.every((value) => value === values[0]);
}

function alternates(values: readonly string[]): boolean {
  return values[0] !== values[1] && values.every((value, index) => value === values[index % 2]);
}
