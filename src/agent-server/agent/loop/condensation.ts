/**
 * Keeping the LLM's view short: when it holds more than `maxEvents` items, or more than
 * `maxTokens` tokens, or the model said it no longer fits its context window, the middle is
 * forgotten and replaced by an LLM-written summary, as OpenHands' LLMSummarizingCondenser does.
 * The first `keepFirst` items stay (the system prompt and the task), and so do the most recent
 * ones: down to about half of `maxEvents`, half of `maxTokens`, or half the view on an overflow.
 */
import { isToolResult, textOf, type SummaryItem, type ViewItem } from './llm-view.js';

export interface CondenserOptions {
  /** Condense when the view holds more items than this. */
  maxEvents: number;
  /** Items at the start of the view that are never forgotten. */
  keepFirst: number;
  /** Condense when the view holds more tokens than this (estimated: 4 characters a token). */
  maxTokens?: number | null;
}

/** Why a condensation is planned: the limits, or the model's refusal of a prompt too long. */
export type CondensationReason = 'limits' | 'overflow';

/** A rough count, good enough to decide when to condense (providers count exactly only after the call). */
export function estimateTokens(item: ViewItem): number {
  return Math.ceil(describe(item).length / 4);
}

export interface CondensationPlan {
  forgotten: ViewItem[];
  forgottenEventIds: string[];
  /** The summary the view shows now, for the LLM to fold into the new one. */
  previousSummary: string | null;
  summaryOffset: number;
}

/** Longest text of one forgotten event quoted in the summary prompt. */
const MAX_EVENT_CHARS = 2000;

export function validateCondenserOptions({ maxEvents, keepFirst }: CondenserOptions): void {
  if (!Number.isInteger(keepFirst) || keepFirst < 0) throw new RangeError('condenser.keepFirst must be an integer >= 0');
  if (!Number.isInteger(maxEvents) || recentCount({ maxEvents, keepFirst }) < 1) {
    throw new RangeError('condenser.maxEvents must be an integer with maxEvents / 2 > keepFirst + 1');
  }
}

/** How many of the latest items survive: half the limit, minus the head and the summary. */
function recentCount({ maxEvents, keepFirst }: CondenserOptions): number {
  return Math.floor(maxEvents / 2) - keepFirst - 1;
}

/** How many latest items to keep, by the strictest reason that applies; null when none does. */
function keptRecentCount(view: readonly ViewItem[], options: CondenserOptions, reason: CondensationReason): number | null {
  const counts: number[] = [];
  if (reason === 'overflow') counts.push(Math.floor(view.length / 2) - options.keepFirst - 1);
  if (view.length > options.maxEvents) counts.push(recentCount(options));
  const tokens = view.map(estimateTokens);
  if (options.maxTokens && tokens.reduce((sum, count) => sum + count, 0) > options.maxTokens) {
    let kept = 0;
    let keptTokens = 0;
    for (let index = view.length - 1; index >= 0 && keptTokens + (tokens[index] ?? 0) <= options.maxTokens / 2; index--) {
      keptTokens += tokens[index] ?? 0;
      kept++;
    }
    counts.push(kept);
  }
  return counts.length === 0 ? null : Math.max(0, Math.min(...counts));
}

/**
 * Which items to forget, or null when the view is short enough. An LLM response's tool calls and
 * their results are kept or forgotten together (a result without its call, or a call without its
 * result, is an invalid chat history): a group reaching into the kept head is kept whole, any
 * other group reaching into the forgotten middle is forgotten whole.
 */
export function planCondensation(view: readonly ViewItem[], options: CondenserOptions, reason: CondensationReason = 'limits'): CondensationPlan | null {
  const kept = keptRecentCount(view, options, reason);
  if (kept === null) return null;
  // The system prompt is always part of the head, so the summary never goes before it.
  const head = Math.max(options.keepFirst, view[0]?.kind === 'SystemPromptEvent' ? 1 : 0);
  const headEnd = Math.min(head, view.length);
  const recentStart = Math.max(headEnd, view.length - kept);

  const responseOfCall = new Map<string, string>();
  for (const item of view) if (item.kind === 'ActionEvent') responseOfCall.set(item.tool_call_id, item.llm_response_id);
  const groupOf = (item: ViewItem): string | undefined => {
    if (item.kind === 'ActionEvent') return item.llm_response_id;
    return isToolResult(item) ? responseOfCall.get(item.tool_call_id) : undefined;
  };
  const keptGroups = new Set(view.slice(0, headEnd).flatMap((item) => groupOf(item) ?? []));
  const forgottenGroups = new Set(
    view.slice(headEnd, recentStart).flatMap((item) => {
      const group = groupOf(item);
      return group !== undefined && !keptGroups.has(group) ? [group] : [];
    }),
  );

  const forgotten = view.filter((item, index) => {
    if (item.kind === 'CondensationSummary') return false;
    const group = groupOf(item);
    if (group !== undefined) return forgottenGroups.has(group);
    return index >= headEnd && index < recentStart;
  });
  const forgottenEventIds = forgotten.flatMap((item) => ('id' in item ? [item.id] : []));
  if (forgottenEventIds.length === 0) return null;
  const summaryItem = view.find((item): item is SummaryItem => item.kind === 'CondensationSummary');
  return {
    forgotten,
    forgottenEventIds,
    previousSummary: summaryItem?.summary ?? null,
    summaryOffset: headEnd,
  };
}

/** The request to the LLM for the new summary. */
export function summaryPrompt(plan: CondensationPlan): string {
  const events = plan.forgotten.map((item) => `<EVENT>\n${truncate(describe(item))}\n</EVENT>`).join('\n');
  return [
    'You keep the memory of an AI software agent. Older events of its conversation are about to be dropped from its context;',
    'write the summary that will stand in for them, so that the agent can carry on without them.',
    '',
    'Keep what the agent needs: the user\'s goals and requirements, decisions made, files and commands involved, results',
    'and errors seen, the current state of the work and what remains to do. Fold the previous summary into the new one.',
    '',
    `<PREVIOUS SUMMARY>\n${plan.previousSummary ?? '(none)'}\n</PREVIOUS SUMMARY>`,
    '',
    events,
    '',
    'Answer with the new summary only.',
  ].join('\n');
}

function describe(item: ViewItem): string {
  switch (item.kind) {
    case 'MessageEvent':
      return `${item.source} message (${item.llm_message.role}): ${textOf([...item.llm_message.content, ...item.extended_content])}`;
    case 'ActionEvent': {
      const thought = textOf(item.thought);
      return `agent called ${item.tool_name} with ${item.tool_call.arguments}${thought ? `\nthought: ${thought}` : ''}`;
    }
    case 'ObservationEvent':
      return `result of ${item.tool_name}${item.observation.is_error ? ' (error)' : ''}: ${textOf(item.observation.content)}`;
    case 'AgentErrorEvent':
      return `error of ${item.tool_name}: ${item.error}`;
    case 'UserRejectObservation':
      return `the user rejected ${item.tool_name}: ${item.rejection_reason}`;
    case 'SystemPromptEvent':
      return `system prompt: ${item.system_prompt.text}`;
    case 'CondensationSummary':
      return `summary: ${item.summary}`;
  }
}

function truncate(text: string): string {
  return text.length > MAX_EVENT_CHARS ? `${text.slice(0, MAX_EVENT_CHARS)}…` : text;
}
