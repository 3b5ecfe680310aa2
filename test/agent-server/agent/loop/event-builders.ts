import {
  ActionEventSchema,
  AgentErrorEventSchema,
  CondensationSchema,
  ConversationStateUpdateEventSchema,
  MessageEventSchema,
  ObservationEventSchema,
  SystemPromptEventSchema,
  UserRejectObservationSchema,
  type ActionEvent,
  type SecurityRisk,
} from '../../../../src/events/index.js';

/** Small builders of valid events for the pure parts of the loop; ids say what each event is. */

export const systemPrompt = (text = 'You are a test agent.') =>
  SystemPromptEventSchema.parse({ kind: 'SystemPromptEvent', id: 'system', system_prompt: { text }, tools: [] });

export const userMessage = (id: string, text: string) =>
  MessageEventSchema.parse({ kind: 'MessageEvent', id, source: 'user', llm_message: { role: 'user', content: [{ text }] } });

export const agentMessage = (id: string, text: string, responseId: string) =>
  MessageEventSchema.parse({
    kind: 'MessageEvent',
    id,
    source: 'agent',
    llm_message: { role: 'assistant', content: [{ text }] },
    llm_response_id: responseId,
  });

export const think = (id: string, callId: string, responseId: string, options: { thought?: string; risk?: SecurityRisk } = {}) =>
  ActionEventSchema.parse({
    kind: 'ActionEvent',
    id,
    thought: options.thought ? [{ text: options.thought }] : [],
    action: { kind: 'ThinkAction', thought: id },
    tool_name: 'think',
    tool_call_id: callId,
    tool_call: { id: callId, name: 'think', arguments: JSON.stringify({ thought: id }), origin: 'completion' },
    llm_response_id: responseId,
    security_risk: options.risk ?? 'UNKNOWN',
  });

export const finish = (id: string, callId: string, responseId: string) =>
  ActionEventSchema.parse({
    kind: 'ActionEvent',
    id,
    thought: [],
    action: { kind: 'FinishAction', message: 'done' },
    tool_name: 'finish',
    tool_call_id: callId,
    tool_call: { id: callId, name: 'finish', arguments: '{"message":"done"}', origin: 'completion' },
    llm_response_id: responseId,
  });

export const observation = (id: string, action: ActionEvent, text = `result of ${action.id}`) =>
  ObservationEventSchema.parse({
    kind: 'ObservationEvent',
    id,
    tool_name: action.tool_name,
    tool_call_id: action.tool_call_id,
    action_id: action.id,
    observation: { kind: 'ThinkObservation', content: [{ text }] },
  });

export const agentError = (id: string, toolCallId: string, error = 'it broke') =>
  AgentErrorEventSchema.parse({ kind: 'AgentErrorEvent', id, tool_name: 'think', tool_call_id: toolCallId, error });

export const rejection = (id: string, action: ActionEvent) =>
  UserRejectObservationSchema.parse({
    kind: 'UserRejectObservation',
    id,
    tool_name: action.tool_name,
    tool_call_id: action.tool_call_id,
    action_id: action.id,
  });

export const condensation = (forgotten: string[], summary: string | null, offset: number | null) =>
  CondensationSchema.parse({ kind: 'Condensation', forgotten_event_ids: forgotten, summary, summary_offset: offset, llm_response_id: 'summary-response' });

export const status = (value: string) =>
  ConversationStateUpdateEventSchema.parse({ kind: 'ConversationStateUpdateEvent', key: 'execution_status', value });
