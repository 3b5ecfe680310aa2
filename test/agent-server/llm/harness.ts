import { afterEach, beforeEach, expect, vi } from 'vitest';
import { startRequest, useTestAgentServer, type AgentServerFixture } from '../../helpers/agent-server.js';
import { ConversationInfoSchema, type ConversationInfo } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema, type Event } from '../../../src/events/index.js';
import { startScriptedLlm, type ReceivedRequest, type ScriptedLlm, type ScriptedLlmOptions, type ScriptStep } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

export interface ConversationRun {
  id: string;
  requests: ReceivedRequest[];
  info: ConversationInfo;
  events: Event[];
}

export interface RunOptions {
  /** Merged into agent.llm; the string ORIGIN becomes the stand-in's origin. */
  llm?: Record<string, unknown>;
  /** Merged into the start request (max_iterations, stuck_detection, ...). */
  request?: Record<string, unknown>;
  /** Merged into `agent` (a condenser); ORIGIN is replaced there too. */
  agent?: Record<string, unknown>;
  responder?: ScriptedLlmOptions['responder'];
  /** How long the run may take; 20 s by default. */
  timeoutMs?: number;
}

export interface LlmConversations {
  agent: AgentServerFixture;
  /** The stand-in's base URL once `run` started it. */
  baseUrl(): string;
  /** The conversations' working directory, made for each test. */
  workspace(): string;
  run(script: ScriptStep[], options?: RunOptions): Promise<ConversationRun>;
}

/**
 * Conversations over HTTP against a stand-in LLM on 127.0.0.1: each `run` starts one with the
 * settings given and a first message, and waits until the agent stops (finished, error, stuck).
 */
export function useLlmConversations(prefix: string): LlmConversations {
  let workspace: string;
  let llm: ScriptedLlm | undefined;
  beforeEach(async () => {
    workspace = await makeTempDir(`${prefix}-workspace-`);
  });
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
    await removeDir(workspace);
  });
  // Registered after the hooks above, so the server closes before the stand-in it may be calling.
  const agent = useTestAgentServer({ tempPrefix: `${prefix}-server-` });

  return {
    agent,
    baseUrl: () => llm!.baseUrl,
    workspace: () => workspace,
    async run(script, options = {}) {
      llm = await startScriptedLlm(script, { responder: options.responder });
      const origin = new URL(llm.baseUrl).origin;
      const withOrigin = (value: unknown): unknown => (typeof value === 'string' ? value.replace('ORIGIN', origin) : value);
      const llmSettings = Object.fromEntries(Object.entries(options.llm ?? {}).map(([key, value]) => [key, withOrigin(value)]));
      const agentSettings = JSON.parse(JSON.stringify(options.agent ?? {}).replaceAll('ORIGIN', origin)) as Record<string, unknown>;
      const created = await agent.server.createConversation(
        startRequest({
          agent: { kind: 'Agent', llm: { model: 'scripted', base_url: llm.baseUrl, api_key: 'sk-test', ...llmSettings }, ...agentSettings },
          workspace: { working_dir: workspace },
          initial_message: { role: 'user', content: [{ type: 'text', text: 'go' }], run: true },
          ...options.request,
        }),
      );
      return { id: created.id, requests: llm.requests, ...(await runEnded(agent, created.id, options.timeoutMs)) };
    },
  };
}

/** Waits until the agent of conversation `id` stops (finished, error, stuck); answers its info and events. */
export async function runEnded(agent: AgentServerFixture, id: string, timeoutMs = 20_000): Promise<{ info: ConversationInfo; events: Event[] }> {
  let info: ConversationInfo | undefined;
  await vi.waitFor(
    async () => {
      info = (await agent.server.callJson('GET', `/api/conversations/${id}`, {}, ConversationInfoSchema)).body;
      expect(['finished', 'error', 'stuck']).toContain(info.execution_status);
    },
    { timeout: timeoutMs, interval: 25 },
  );
  const events = (await agent.server.callJson('GET', `/api/conversations/${id}/events/search?limit=100`, {}, pageSchema(EventSchema))).body.items;
  return { info: info!, events };
}
