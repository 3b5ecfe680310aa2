import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MessageEventSchema,
  ThinkActionSchema,
  ThinkObservationSchema,
  ThinkToolSchema,
  messageSearchText,
  type Event,
} from '../../../../src/events/index.js';
import { createAgentRunner, type AgentRunner, type AgentRunnerOptions, type RunnerStateChange } from '../../../../src/agent-server/agent/index.js';
import { createLlmClient } from '../../../../src/agent-server/agent/llm/index.js';
import { createFinishTool, createThinkTool, type AnyTool, type ThinkAction, type ThinkObservation, type Tool } from '../../../../src/agent-server/agent/tools/index.js';
import { parseActionArguments } from '../../../../src/agent-server/agent/tools/tool.js';
import { openEventLog, type EventLog } from '../../../../src/agent-server/store/index.js';
import { startScriptedLlm, type ScriptStep, type ScriptedLlm } from '../../../helpers/scripted-llm.js';

export const API_KEY = 'sk-loop-test-secret';
export const MODEL = 'test-model';

export interface Harness {
  dir: string;
  log: EventLog<Event>;
  llm: ScriptedLlm;
  /** Every onStateChange call of every runner made here, in order. */
  stateChanges: RunnerStateChange[];
  /** A runner over the harness's log; think + finish tools unless told otherwise. */
  runner(options?: Partial<AgentRunnerOptions>): Promise<AgentRunner>;
  userSays(text: string): Promise<void>;
  events(): Promise<Event[]>;
  close(): Promise<void>;
}

/** A temp dir, a real event log in it, a scripted LLM server, and the runners made over them. */
export async function startHarness(script: ScriptStep[]): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-loop-'));
  const log = await openEventLog<Event>(join(dir, 'events.ndjson'), { searchableText: messageSearchText });
  const llm = await startScriptedLlm(script);
  const client = createLlmClient({
    model: MODEL,
    base_url: llm.baseUrl,
    api_key: API_KEY,
    max_retries: 1,
    retry_min_wait_ms: 1,
    retry_max_wait_ms: 1,
  });
  const runners: AgentRunner[] = [];
  const stateChanges: RunnerStateChange[] = [];
  return {
    dir,
    log,
    llm,
    stateChanges,
    async runner(options = {}) {
      const runner = await createAgentRunner({
        conversationId: 'conversation-under-test',
        log,
        llm: client,
        tools: [createThinkTool(), createFinishTool()],
        maxIterations: 20,
        confirmationPolicy: { kind: 'NeverConfirm' },
        onStateChange: (change) => stateChanges.push(change),
        ...options,
      });
      runners.push(runner);
      return runner;
    },
    async userSays(text) {
      await log.append([
        MessageEventSchema.parse({ kind: 'MessageEvent', source: 'user', llm_message: { role: 'user', content: [{ text }] } }),
      ]);
    },
    events: () => log.readRange(0, log.size),
    async close() {
      await Promise.all(runners.map((runner) => runner.close()));
      await log.close();
      await llm.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One line per event, enough to compare whole sequences: kind, and who or what it is about. */
export function describeEvent(event: Event): string {
  switch (event.kind) {
    case 'MessageEvent':
      return `MessageEvent(${event.source})`;
    case 'ActionEvent':
    case 'ObservationEvent':
    case 'AgentErrorEvent':
    case 'UserRejectObservation':
      return `${event.kind}(${event.tool_name})`;
    case 'ConversationStateUpdateEvent':
      return `${String(event.key)}=${JSON.stringify(event.value)}`;
    case 'ConversationErrorEvent':
      return `ConversationErrorEvent(${event.code})`;
    default:
      return event.kind;
  }
}

export async function describedEvents(harness: Harness): Promise<string[]> {
  return (await harness.events()).map(describeEvent);
}

export function ofKind<K extends Event['kind']>(events: readonly Event[], kind: K): Extract<Event, { kind: K }>[] {
  return events.filter((event): event is Extract<Event, { kind: K }> => event.kind === kind);
}

export interface GateTool {
  tool: AnyTool;
  /** Resolves when the tool has started running. */
  started: Promise<void>;
  /** Lets the running call finish. */
  release(): void;
}

/**
 * A `gate` tool (think-shaped) whose one call blocks until the test releases it, or until the run's
 * signal aborts it: a deterministic way to act while a tool runs.
 */
export function createGateTool(): GateTool {
  let markStarted!: () => void;
  let release!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const tool: Tool<ThinkAction, ThinkObservation> = {
    name: 'gate',
    description: 'Waits for the test.',
    parameters: { type: 'object', properties: { thought: { type: 'string' } }, required: ['thought'] },
    actionKind: 'ThinkAction',
    observationKind: 'ThinkObservation',
    definition: ThinkToolSchema.parse({ kind: 'ThinkTool', title: 'gate', description: 'Waits for the test.', action_type: 'ThinkAction' }),
    parseArguments: (args) => parseActionArguments('gate', ThinkActionSchema, args),
    async execute(action, ctx = {}) {
      markStarted();
      const aborted = new Promise<void>((resolve) => ctx.signal?.addEventListener('abort', () => resolve(), { once: true }));
      await Promise.race([released, aborted]);
      return ThinkObservationSchema.parse({ kind: 'ThinkObservation', content: [{ text: `gate passed: ${action.thought}` }] });
    },
    close: async () => {},
  };
  return { tool, started, release };
}
