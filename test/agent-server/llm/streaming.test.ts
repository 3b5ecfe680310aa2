/**
 * agent.llm.stream: the answer's pieces reach the live subscribers of /sockets/events/{id} as
 * StreamingDeltaEvent frames (OpenHands' transient event), in order, while the stored events stay those of the same run unstreamed.
 * Driven over HTTP and a WebSocket against the scripted LLM streaming OpenAI Chat chunks and
 * Anthropic Messages events.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startListeningAgentServer, startRequest, type ListeningAgentServer } from '../../helpers/agent-server.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema, type Event } from '../../../src/events/index.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { startScriptedLlm, text, toolCalls, type ScriptedLlm, type ScriptStep } from '../../helpers/scripted-llm.js';

let agent: ListeningAgentServer;
let workspace: string;
beforeAll(async () => {
  agent = await startListeningAgentServer();
  workspace = await makeTempDir('llm-streaming-workspace-');
});
const sockets: WebSocket[] = [];
afterAll(async () => {
  for (const socket of sockets) socket.terminate();
  await agent.close();
  await removeDir(workspace);
});

const FINAL_TEXT = 'The answer is 42, as the plan said — done.';
const THOUGHT = 'First plan, then answer.';
const SIGNATURE = 'sig-abc123';

function script(gate: Promise<void>, anthropic: boolean): ScriptStep[] {
  return [
    async () => {
      await gate;
      return toolCalls([{ name: 'think', arguments: { thought: 'a plan with "quotes" and ünïcode' } }]);
    },
    text(FINAL_TEXT, anthropic ? { thinking_blocks: [{ type: 'thinking', thinking: THOUGHT, signature: SIGNATURE }] } : { reasoning_content: THOUGHT }),
  ];
}

interface Frame extends Record<string, unknown> {
  kind?: string;
}

interface Run {
  events: Event[];
  frames: Frame[];
  llm: ScriptedLlm;
}

async function run(model: string, stream: boolean): Promise<Run> {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const llm = await startScriptedLlm(script(gate, model.startsWith('anthropic/')));
  try {
    const created = await agent.call(
      'POST',
      '/api/conversations',
      startRequest({
        agent: { kind: 'Agent', llm: { model, base_url: llm.baseUrl, api_key: 'sk-test', stream } },
        workspace: { working_dir: workspace },
        initial_message: { role: 'user', content: [{ type: 'text', text: 'go' }], run: true },
      }),
    );
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    const frames: Frame[] = [];
    const socket = new WebSocket(`${agent.wsUrl}/sockets/events/${id}?resend_all=true`, { headers: { 'x-session-api-key': agent.key } });
    sockets.push(socket);
    socket.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
    // The LLM answers only once the subscriber holds its first frame, so it hears the whole stream.
    await vi.waitFor(() => expect(frames.length).toBeGreaterThan(0), { timeout: 10_000 });
    open();
    await vi.waitFor(
      async () => {
        const info = await agent.call('GET', `/api/conversations/${id}`, undefined, ConversationInfoSchema);
        expect(info.body.execution_status).toBe('finished');
      },
      { timeout: 20_000, interval: 25 },
    );
    const events = (await agent.call('GET', `/api/conversations/${id}/events/search?limit=100`, undefined, pageSchema(EventSchema))).body.items;
    await vi.waitFor(() => expect(events.filter((event) => !frames.some((frame) => frame.id === event.id))).toEqual([]), { timeout: 10_000 });
    return { events, frames, llm };
  } finally {
    await llm.close();
  }
}

/** Ids and times are new in every run; what the events say must not differ. */
function comparable(events: Event[]): unknown[] {
  return events.map((event) => {
    const { id: _id, timestamp: _timestamp, ...rest } = event as Event & { action_id?: string };
    return { ...rest, ...('action_id' in rest ? { action_id: 'same' } : {}), ...(event.kind === 'ConversationStateUpdateEvent' ? { value: 'same' } : {}) };
  });
}

interface DeltaFrame {
  kind: 'StreamingDeltaEvent';
  id: string;
  timestamp: string;
  source: 'agent';
  content: string | null;
  reasoning_content: string | null;
}

describe.each([
  ['OpenAI Chat Completions', 'scripted-model'],
  ['Anthropic Messages', 'anthropic/claude-sonnet-4-5'],
])('streaming over %s', (_name, model) => {
  it('sends the pieces to the subscribers in order, and stores the events of the unstreamed run', async () => {
    const whole = await run(model, false);
    const streamed = await run(model, true);

    expect(streamed.llm.requests.map((request) => request.body.stream)).toEqual([true, true]);
    expect(whole.llm.requests.map((request) => request.body.stream)).toEqual([undefined, undefined]);
    expect(whole.frames.filter((frame) => frame.kind === 'StreamingDeltaEvent')).toEqual([]);
    expect(comparable(streamed.events)).toEqual(comparable(whole.events));

    const deltas = streamed.frames.filter((frame): frame is Frame & DeltaFrame => frame.kind === 'StreamingDeltaEvent');
    expect(deltas.every((frame) => frame.source === 'agent' && typeof frame.id === 'string' && typeof frame.timestamp === 'string')).toBe(true);
    const contentPieces = deltas.filter((frame) => frame.content !== null);
    const reasoningPieces = deltas.filter((frame) => frame.reasoning_content !== null);
    expect(contentPieces.length).toBeGreaterThan(5);
    expect(contentPieces.map((frame) => frame.content).join('')).toBe(FINAL_TEXT);
    expect(reasoningPieces.map((frame) => frame.reasoning_content).join('')).toBe(THOUGHT);

    // Every piece comes after the tool call's ActionEvent (the first answer streamed no text) and
    // before the final message, whose text the pieces make up.
    const at = (predicate: (frame: Frame) => boolean): number => streamed.frames.findIndex(predicate);
    const actionFrame = at((frame) => frame.kind === 'ActionEvent');
    const messageFrame = at((frame) => frame.kind === 'MessageEvent' && frame.source === 'agent');
    expect(streamed.frames.indexOf(deltas[0]!)).toBeGreaterThan(actionFrame);
    expect(streamed.frames.indexOf(deltas.at(-1)!)).toBeLessThan(messageFrame);
    const message = streamed.events.find((event) => event.kind === 'MessageEvent' && event.source === 'agent');
    expect(message).toMatchObject({ llm_message: { content: [{ type: 'text', text: FINAL_TEXT }], reasoning_content: THOUGHT } });
    expect(streamed.events.some((event) => (event.kind as string) === 'StreamingDeltaEvent')).toBe(false);
  });
});
