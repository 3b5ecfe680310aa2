/**
 * The agent loop of one conversation: ask the LLM, record what it wants as events, run the tools,
 * record what they report, and again, until the agent finishes, waits for the user, is paused, or
 * fails. Every decision is recorded in the conversation's event log before it is acted on, and the
 * loop reads its state back from that log, so a runner created after a restart carries on where
 * the last one stopped.
 *
 * Invariants:
 * - One loop at a time per runner; `run()` while it runs returns the running loop's promise.
 * - Each step is one of: run the pending actions, condense the view, or ask the LLM. The events of
 *   one LLM response (its completion log, actions and errors) are appended as one batch.
 * - Pause takes effect at a safe point: before a step, between two tools, or by abandoning an LLM
 *   call in flight (nothing of it was recorded; it is asked again on resume). A running tool is
 *   not interrupted: its result is recorded first.
 * - `run()` never rejects: a failure is recorded as a ConversationErrorEvent and status `error`.
 * - After `close()` nothing more is appended: the log may be closing too.
 */
import type { ExecutionStatus } from '../../../contracts/agent-server/execution-status.js';
import {
  AgentErrorEventSchema,
  CondensationSchema,
  ConversationErrorEventSchema,
  MessageEventSchema,
  ObservationEventSchema,
  PauseEventSchema,
  SystemPromptEventSchema,
  UserRejectObservationSchema,
  type Action,
  type ActionEvent,
  type AgentErrorEvent,
  type Event,
  type ObservationEvent,
} from '../../../events/index.js';
import { logger, type Logger } from '../../../logger.js';
import type { EventLog } from '../../store/index.js';
import { LlmError, type ChatTool, type LlmAnswer, type LlmClient, type LlmDelta } from '../llm/index.js';
import { priceOf, callCost } from '../llm/pricing.js';
import { totalCost, withCall, type CallRecord, type ConversationStats } from '../llm/usage-metrics.js';
import { fixedToolSet, type AnyTool, type ToolAction, type ToolSet } from '../tools/index.js';
import { completionLogEvent, type CompletionRequest } from './completion-log.js';
import { planCondensation, summaryPrompt, validateCondenserOptions, type CondensationPlan, type CondenserOptions } from './condensation.js';
import { needsConfirmation, normalizeConfirmationPolicy, type ConfirmationPolicy } from './confirmation-policy.js';
import { buildView, viewMessages } from './llm-view.js';
import { hasUserMessageSinceStatusChange, iterationsOfCurrentRun, pendingActions, recordedStatus } from './run-state.js';
import { recordedExecutionStatus, stateUpdateEvent, type RunnerStateChange } from './state-change.js';
import { detectStuck, describeStuck } from './stuck-detection.js';
import { DEFAULT_SYSTEM_PROMPT } from './system-prompt.js';
import { chatTools, eventsFromToolCalls } from './tool-calls.js';

export interface AgentRunnerOptions {
  /** For logs. */
  conversationId: string;
  log: EventLog<Event>;
  llm: LlmClient;
  /** Owned by the runner from now on: `close()` closes them. A set's tools may change while it runs (MCP servers). */
  tools: AnyTool[] | ToolSet;
  /** LLM steps (responses and condensations) one run may take before it stops with an error. */
  maxIterations: number;
  confirmationPolicy: ConfirmationPolicy;
  /** Recorded in the SystemPromptEvent at the first run; DEFAULT_SYSTEM_PROMPT when absent. */
  systemPrompt?: string;
  /** Record an LLMCompletionLogEvent for every LLM call. */
  logCompletions?: boolean;
  /** Also writes each completion log to a file of this name (OpenHands' log_completions_folder). */
  saveCompletionLog?: ((filename: string, data: string) => Promise<void>) | null;
  condenser?: CondenserOptions | null;
  /** Writes the condensations' summaries; the agent's LLM when absent. */
  condenserLlm?: LlmClient | null;
  /** The agent LLM's key in the stats (its usage_id; OpenHands' default, `default`, when absent). */
  usageId?: string;
  /** What earlier runs used and cost; counting goes on from there. */
  stats?: ConversationStats;
  /** Called after every LLM call with the new stats. */
  onStats?: (stats: ConversationStats) => void;
  /** Called after every LLM call (for Prometheus). */
  onCall?: (call: CallRecord) => void;
  /** Hears the agent LLM's answer piece by piece while it streams (agent.llm.stream). */
  onDelta?: (delta: LlmDelta) => void;
  /** US dollars the conversation may spend on LLM calls; the run stops with an error when reached. */
  maxBudgetPerTask?: number | null;
  /** Stop with status `stuck` when the agent loops (OpenHands' stuck detection). */
  stuckDetection?: boolean;
  /** Called after a state change is durable. */
  onStateChange?: (change: RunnerStateChange) => void;
}

export interface ConfirmationResponse {
  accept: boolean;
  /** Recorded as the rejection reason; OpenHands' default when absent. */
  reason?: string;
}

export interface AgentRunner {
  readonly executionStatus: ExecutionStatus;
  readonly confirmationPolicy: ConfirmationPolicy;
  /**
   * Runs the loop until it stops: finished, waiting for confirmation, paused, or error. Pending
   * actions run first (for actions waiting for confirmation, that is the user's approval). When
   * the agent has finished and no user wrote since, there is nothing to do. Never rejects.
   */
  run(): Promise<void>;
  /**
   * Stops a running loop at its next safe point and resolves once it has stopped, with a
   * PauseEvent and status `paused`. An idle conversation is paused at once; in any other state
   * this does nothing (as in OpenHands).
   */
  pause(): Promise<void>;
  /**
   * Accept: the same as `run()`. Reject: every pending action gets a UserRejectObservation and a
   * conversation waiting for confirmation becomes `idle`, as in OpenHands; the next `run()` shows
   * the model the rejection. A reject while the loop runs does nothing.
   */
  respondToConfirmation(response: ConfirmationResponse): Promise<void>;
  /** Takes effect from the next LLM response on; recorded as a `confirmation_policy` update. */
  setConfirmationPolicy(policy: ConfirmationPolicy): Promise<void>;
  /** Stops the loop (a running tool is interrupted, its result dropped) and closes the tools. */
  close(): Promise<void>;
}

/** Reads the conversation's state back from its log, then returns the runner. */
export async function createAgentRunner(options: AgentRunnerOptions): Promise<AgentRunner> {
  if (!Number.isInteger(options.maxIterations) || options.maxIterations < 1) {
    throw new RangeError('maxIterations must be an integer >= 1');
  }
  if (options.condenser) validateCondenserOptions(options.condenser);
  const runner = new Runner(options);
  await runner.load();
  return runner;
}

type StepOutcome = 'continue' | 'finished' | 'waiting_for_confirmation';

/** How a conversation without a condenser condenses when its prompt overflows (OpenHands' keep_first). */
const OVERFLOW_CONDENSER: CondenserOptions = { maxEvents: Number.MAX_SAFE_INTEGER, keepFirst: 2 };

/** The condenser LLM's key in the stats, as in OpenHands. */
const CONDENSER_USAGE_ID = 'condenser';

/** What the model is told when it answered neither with a tool call nor with text. */
const EMPTY_RESPONSE_NUDGE =
  'Your last response contained neither a tool call nor a message. Use a tool to go on with the task, or answer the user.';

class Runner implements AgentRunner {
  private readonly eventLog: EventLog<Event>;
  private readonly llm: LlmClient;
  private readonly tools: ToolSet;
  /** What the LLM is offered, made again when the tool set changes. */
  private offered: { tools: readonly AnyTool[]; chat: ChatTool[]; byName: ReadonlyMap<string, AnyTool> } | null = null;
  private readonly maxIterations: number;
  private readonly systemPrompt: string;
  private readonly logCompletions: boolean;
  private readonly condenser: CondenserOptions | null;
  private readonly condenserLlm: LlmClient;
  private readonly saveCompletionLog: ((filename: string, data: string) => Promise<void>) | null;
  private readonly usageId: string;
  private stats: ConversationStats;
  private readonly onStats: ((stats: ConversationStats) => void) | undefined;
  private readonly onCall: ((call: CallRecord) => void) | undefined;
  private readonly onDelta: ((delta: LlmDelta) => void) | undefined;
  private readonly maxBudgetPerTask: number | null;
  private readonly stuckDetection: boolean;
  private readonly onStateChange: ((change: RunnerStateChange) => void) | undefined;
  private readonly logger: Logger;

  private policy: ConfirmationPolicy;
  private status: ExecutionStatus = 'idle';
  /** The events the loop works from (the kinds it reads; bulky logs and tokens are left out), in log order. */
  private readonly history: Event[] = [];
  private synced = 0;
  private syncing: Promise<void> = Promise.resolve();

  private active: Promise<void> | null = null;
  private pauseRequested = false;
  private closed = false;
  private closing: Promise<void> | null = null;
  private readonly stopTools = new AbortController();
  private llmCall: AbortController | null = null;

  constructor(options: AgentRunnerOptions) {
    this.eventLog = options.log;
    this.llm = options.llm;
    this.tools = Array.isArray(options.tools) ? fixedToolSet(options.tools) : options.tools;
    this.maxIterations = options.maxIterations;
    this.systemPrompt = options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
    this.logCompletions = options.logCompletions ?? false;
    this.condenser = options.condenser ?? null;
    this.condenserLlm = options.condenserLlm ?? options.llm;
    this.saveCompletionLog = options.saveCompletionLog ?? null;
    this.usageId = options.usageId ?? 'default';
    this.stats = options.stats ?? { usage_to_metrics: {} };
    this.onStats = options.onStats;
    this.onCall = options.onCall;
    this.onDelta = options.onDelta;
    this.maxBudgetPerTask = options.maxBudgetPerTask ?? null;
    this.stuckDetection = options.stuckDetection ?? false;
    this.onStateChange = options.onStateChange;
    this.policy = normalizeConfirmationPolicy(options.confirmationPolicy);
    this.logger = logger.child({ component: 'agent-loop', conversationId: options.conversationId });
  }

  async load(): Promise<void> {
    await this.sync();
    this.status = recordedStatus(this.history);
  }

  get executionStatus(): ExecutionStatus {
    return this.status;
  }

  get confirmationPolicy(): ConfirmationPolicy {
    return this.policy;
  }

  run(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.active ??= this.loop().finally(() => {
      this.active = null;
      this.pauseRequested = false;
    });
    return this.active;
  }

  async pause(): Promise<void> {
    if (this.active) {
      this.pauseRequested = true;
      this.llmCall?.abort();
      await this.active;
    } else if (!this.closed && (this.status === 'idle' || this.status === 'running')) {
      await this.setStatus('paused', [PauseEventSchema.parse({ kind: 'PauseEvent' })]);
    }
  }

  async respondToConfirmation({ accept, reason }: ConfirmationResponse): Promise<void> {
    if (accept) return this.run();
    if (this.active || this.closed) return;
    await this.sync();
    const rejections = pendingActions(this.history).map((action) =>
      UserRejectObservationSchema.parse({
        kind: 'UserRejectObservation',
        tool_name: action.tool_name,
        tool_call_id: action.tool_call_id,
        action_id: action.id,
        rejection_source: 'user',
        ...(reason ? { rejection_reason: reason } : {}),
      }),
    );
    if (this.status === 'waiting_for_confirmation') await this.setStatus('idle', rejections);
    else await this.record(rejections);
  }

  async setConfirmationPolicy(policy: ConfirmationPolicy): Promise<void> {
    const change: RunnerStateChange = { key: 'confirmation_policy', value: normalizeConfirmationPolicy(policy) };
    this.policy = change.value;
    await this.record([stateUpdateEvent(change)]);
    this.notify(change);
  }

  close(): Promise<void> {
    if (this.closing === null) {
      this.closed = true;
      this.stopTools.abort();
      this.llmCall?.abort();
      this.closing = (async () => {
        await this.active;
        await this.tools.close();
      })();
    }
    return this.closing;
  }

  private async loop(): Promise<void> {
    try {
      await this.sync();
      if (this.status === 'finished' && !hasUserMessageSinceStatusChange(this.history)) return;
      if (!this.history.some((event) => event.kind === 'SystemPromptEvent')) {
        await this.record([
          SystemPromptEventSchema.parse({
            kind: 'SystemPromptEvent',
            system_prompt: { text: this.systemPrompt },
            tools: this.tools.tools.map((tool) => tool.definition),
          }),
        ]);
      }
      // A `running` read back from the log is a run cut short by a restart: it goes on, and its
      // iterations keep counting.
      if (this.status !== 'running') await this.setStatus('running');
      while (!this.closed) {
        if (this.pauseRequested) {
          await this.setStatus('paused', [PauseEventSchema.parse({ kind: 'PauseEvent' })]);
          return;
        }
        await this.sync();
        if (iterationsOfCurrentRun(this.history) >= this.maxIterations) {
          await this.setStatus('error', [
            ConversationErrorEventSchema.parse({
              kind: 'ConversationErrorEvent',
              source: 'environment',
              code: 'MaxIterationsReached',
              detail: `Agent reached maximum iterations limit (${this.maxIterations}).`,
            }),
          ]);
          return;
        }
        const stop = this.stopReason();
        if (stop) {
          await this.setStatus(stop.status, [stop.error]);
          return;
        }
        const outcome = await this.step();
        if (this.closed) return;
        if (outcome !== 'continue') {
          await this.setStatus(outcome);
          return;
        }
      }
    } catch (error) {
      if (!this.closed) await this.fail(error);
    }
  }

  /** Why the run must not take another step: the budget is spent, or the agent is stuck. */
  private stopReason(): { status: ExecutionStatus; error: Event } | null {
    const error = (code: string, detail: string) =>
      ConversationErrorEventSchema.parse({ kind: 'ConversationErrorEvent', source: 'environment', code, detail });
    const spent = totalCost(this.stats);
    if (this.maxBudgetPerTask !== null && spent >= this.maxBudgetPerTask) {
      const detail = `Agent reached maximum budget for conversation: spent $${spent.toFixed(4)} of $${this.maxBudgetPerTask.toFixed(4)}.`;
      return { status: 'error', error: error('MaxBudgetReached', detail) };
    }
    const stuck = this.stuckDetection ? detectStuck(this.history) : null;
    if (stuck) return { status: 'stuck', error: error('AgentStuckInLoopError', describeStuck(stuck)) };
    return null;
  }

  private async step(): Promise<StepOutcome> {
    const pending = pendingActions(this.history);
    const [firstPending] = pending;
    if (firstPending) return this.execute(pending, this.history.indexOf(firstPending));

    const seen = this.history.length;
    const view = buildView(this.history);
    const plan = this.condenser && planCondensation(view, this.condenser);
    if (plan) return this.condense(plan);

    const offered = this.offeredTools();
    const request: CompletionRequest = { messages: viewMessages(view), tools: offered.chat };
    let response: LlmAnswer | null;
    try {
      response = await this.complete(this.llm, this.usageId, request, this.onDelta);
    } catch (error) {
      // The prompt outgrew the model's context window: forget half of it and ask again.
      const overflow = error instanceof LlmError && error.code === 'LLMContextWindowExceedError';
      const forced = overflow ? planCondensation(view, this.condenser ?? OVERFLOW_CONDENSER, 'overflow') : null;
      if (forced === null) throw error;
      this.logger.info({ forgotten: forced.forgottenEventIds.length }, 'the prompt overflowed the context window; condensing');
      return this.condense(forced);
    }
    if (response === null) return 'continue';

    if (response.tool_calls.length > 0) {
      const { events, actions } = eventsFromToolCalls(response, offered.byName);
      await this.record([...this.completionLog(request, response), ...events]);
      if (needsConfirmation(this.policy, actions)) return 'waiting_for_confirmation';
      return this.execute(actions, seen);
    }

    // A text answer ends the run (OpenHands: FINISHED, the agent awaits the user). An empty one
    // does not: the model is told to go on.
    const text = response.content ?? '';
    const message = MessageEventSchema.parse({
      kind: 'MessageEvent',
      source: 'agent',
      llm_message: {
        role: 'assistant',
        content: text === '' ? [] : [{ type: 'text', text }],
        reasoning_content: response.reasoning_content,
        thinking_blocks: response.thinking_blocks,
        responses_reasoning_item: response.responses_reasoning_item,
      },
      llm_response_id: response.id,
    });
    if (text.trim() !== '') {
      await this.record([...this.completionLog(request, response), message]);
      return this.finishedUnlessUserWrote(seen);
    }
    const nudge = MessageEventSchema.parse({
      kind: 'MessageEvent',
      source: 'environment',
      llm_message: { role: 'user', content: [{ type: 'text', text: EMPTY_RESPONSE_NUDGE }] },
    });
    await this.record([...this.completionLog(request, response), message, nudge]);
    return 'continue';
  }

  /**
   * Runs actions in order, recording each result before the next one starts. `seen` is the end of
   * the history the LLM saw when it chose them.
   */
  private async execute(actions: readonly ActionEvent[], seen: number): Promise<StepOutcome> {
    let finished = false;
    for (const action of actions) {
      if (this.pauseRequested || this.closed) return 'continue';
      const result = await this.runTool(action);
      if (this.closed) return 'continue';
      await this.record([result]);
      finished ||= action.action?.kind === 'FinishAction' && result.kind === 'ObservationEvent';
    }
    return finished ? this.finishedUnlessUserWrote(seen) : 'continue';
  }

  /**
   * The agent is done, unless a user wrote while it was working on what the LLM saw up to `seen`:
   * then the run goes on so that the message gets its answer (as OpenHands' loop does).
   */
  private async finishedUnlessUserWrote(seen: number): Promise<StepOutcome> {
    await this.sync();
    const wrote = this.history.slice(seen).some((event) => event.kind === 'MessageEvent' && event.source === 'user');
    return wrote ? 'continue' : 'finished';
  }

  /** The tool's observation; an AgentErrorEvent when the tool is gone or throws. */
  private async runTool(event: ActionEvent): Promise<ObservationEvent | AgentErrorEvent> {
    const tool = this.tools.get(event.tool_name);
    const fail = (error: string) =>
      AgentErrorEventSchema.parse({ kind: 'AgentErrorEvent', tool_name: event.tool_name, tool_call_id: event.tool_call_id, error });
    if (tool === undefined || event.action === null || !isActionOf(tool, event.action)) {
      return fail(`Tool "${event.tool_name}" is not available to run this action.`);
    }
    try {
      const observation = await tool.execute(event.action, { signal: this.stopTools.signal });
      return ObservationEventSchema.parse({
        kind: 'ObservationEvent',
        tool_name: tool.name,
        tool_call_id: event.tool_call_id,
        observation,
        action_id: event.id,
      });
    } catch (error) {
      this.logger.warn({ err: error, tool: tool.name }, 'a tool failed');
      return fail(`Error executing tool "${tool.name}": ${messageOf(error)}`);
    }
  }

  private offeredTools(): { chat: ChatTool[]; byName: ReadonlyMap<string, AnyTool> } {
    const tools = this.tools.tools;
    if (this.offered?.tools !== tools) {
      this.offered = { tools, chat: chatTools(tools), byName: new Map(tools.map((tool) => [tool.name, tool])) };
    }
    return this.offered;
  }

  private async condense(plan: CondensationPlan): Promise<StepOutcome> {
    const request: CompletionRequest = { messages: [{ role: 'user', content: summaryPrompt(plan) }] };
    const response = await this.complete(this.condenserLlm, CONDENSER_USAGE_ID, request);
    if (response === null) return 'continue';
    await this.record([
      ...this.completionLog(request, response, CONDENSER_USAGE_ID),
      CondensationSchema.parse({
        kind: 'Condensation',
        forgotten_event_ids: plan.forgottenEventIds,
        summary: response.content,
        summary_offset: plan.summaryOffset,
        llm_response_id: response.id,
      }),
    ]);
    return 'continue';
  }

  /** The LLM's answer, counted in the stats; null when a pause or close abandoned the call. */
  private async complete(llm: LlmClient, usageId: string, request: CompletionRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmAnswer | null> {
    if (this.pauseRequested || this.closed) return null;
    const call = new AbortController();
    this.llmCall = call;
    try {
      const answer = await llm.complete({ ...request, onDelta, signal: AbortSignal.any([call.signal, this.stopTools.signal]) });
      this.count(llm, usageId, answer);
      return answer;
    } catch (error) {
      if (call.signal.aborted || this.closed) return null;
      throw error;
    } finally {
      this.llmCall = null;
    }
  }

  private count(llm: LlmClient, usageId: string, answer: LlmAnswer): void {
    const record: CallRecord = {
      usageId,
      model: llm.config.model,
      responseId: answer.id,
      usage: answer.usage,
      cost: callCost(priceOf(llm.config.model_canonical_name ?? llm.config.model, llm.config), answer.usage),
      latencyMs: answer.latency_ms,
      maxBudgetPerTask: this.maxBudgetPerTask,
      at: Date.now() / 1000,
    };
    this.stats = withCall(this.stats, record);
    this.onCall?.(record);
    try {
      this.onStats?.(this.stats);
    } catch (error) {
      this.logger.warn({ err: error }, 'a stats listener failed');
    }
  }

  private completionLog(request: CompletionRequest, response: LlmAnswer, usageId = this.usageId): Event[] {
    if (!this.logCompletions) return [];
    const event = completionLogEvent(request, response, new Date(), usageId);
    this.saveCompletionLog?.(event.filename, event.log_data).catch((error: unknown) => this.logger.warn({ err: error }, 'writing a completion log file failed'));
    return [event];
  }

  /** An unexpected failure: recorded for clients, never thrown at the caller of `run()`. */
  private async fail(error: unknown): Promise<void> {
    const code = error instanceof LlmError ? error.code : error instanceof Error ? error.name : 'Error';
    // LlmError details carry no api key: the client cuts it out.
    const detail = error instanceof LlmError ? error.detail : messageOf(error);
    this.logger.warn({ err: error, code }, 'the agent loop stopped on an error');
    try {
      await this.setStatus('error', [
        ConversationErrorEventSchema.parse({ kind: 'ConversationErrorEvent', source: 'environment', code, detail }),
      ]);
    } catch (recordError) {
      this.logger.error({ err: recordError }, 'recording the error of the agent loop failed');
      this.status = 'error';
      this.notify({ key: 'execution_status', value: 'error' });
    }
  }

  /** Appends the events and, when the status changes, its state update, in one batch. */
  private async setStatus(status: ExecutionStatus, events: Event[] = []): Promise<void> {
    if (status === this.status) {
      await this.record(events);
      return;
    }
    const change: RunnerStateChange = { key: 'execution_status', value: status };
    await this.record([...events, stateUpdateEvent(change)]);
    this.status = status;
    this.notify(change);
  }

  private async record(events: readonly Event[]): Promise<void> {
    if (events.length > 0) await this.eventLog.append(events);
  }

  private notify(change: RunnerStateChange): void {
    try {
      this.onStateChange?.(change);
    } catch (error) {
      this.logger.warn({ err: error, key: change.key }, 'a state change listener failed');
    }
  }

  /** Brings `history` up to the log's end: the loop's own events and those others appended (user messages). */
  private sync(): Promise<void> {
    const next = this.syncing.then(async () => {
      const size = this.eventLog.size;
      if (size <= this.synced) return;
      const events = await this.eventLog.readRange(this.synced, size);
      this.synced = size;
      for (const event of events) if (isLoopEvent(event)) this.history.push(event);
    });
    this.syncing = next.catch(() => undefined);
    return next;
  }
}

const LOOP_KINDS: ReadonlySet<string> = new Set([
  'SystemPromptEvent',
  'MessageEvent',
  'ActionEvent',
  'ObservationEvent',
  'AgentErrorEvent',
  'UserRejectObservation',
  'Condensation',
]);

function isLoopEvent(event: Event): boolean {
  return LOOP_KINDS.has(event.kind) || recordedExecutionStatus(event) !== undefined;
}

function isActionOf(tool: AnyTool, action: Action): action is ToolAction {
  return action.kind === tool.actionKind;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
