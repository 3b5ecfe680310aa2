/** Events of several kinds and sources, in the wire shape a client would import or read back. */

export function messageEvent(id: string, timestamp: string, text: string, source = 'user'): Record<string, unknown> {
  const role = source === 'agent' ? 'assistant' : 'user';
  return { kind: 'MessageEvent', id, timestamp, source, llm_message: { role, content: [{ type: 'text', text }] } };
}

export function agentErrorEvent(id: string, timestamp: string): Record<string, unknown> {
  return { kind: 'AgentErrorEvent', id, timestamp, source: 'agent', tool_name: 'terminal', tool_call_id: 'call_1', error: 'exit 1' };
}

export function conversationErrorEvent(id: string, timestamp: string): Record<string, unknown> {
  return { kind: 'ConversationErrorEvent', id, timestamp, source: 'environment', code: 'RuntimeError', detail: 'boom' };
}

export function pauseEvent(id: string, timestamp: string): Record<string, unknown> {
  return { kind: 'PauseEvent', id, timestamp, source: 'user' };
}

/**
 * A small history whose timestamps are out of append order, naive (OpenHands' Python isoformat)
 * and offset-qualified, so ordering and time filters are exercised on the real formats.
 */
export function sampleHistory(): Record<string, unknown>[] {
  return [
    messageEvent('e1', '2024-05-01T10:00:00.000000', 'Please FIX the failing test'),
    agentErrorEvent('e2', '2024-05-01T10:00:02Z'),
    messageEvent('e3', '2024-05-01T10:00:01+00:00', 'I will fix it now', 'agent'),
    conversationErrorEvent('e4', '2024-05-01T12:00:03+02:00'),
    pauseEvent('e5', '2024-05-01T10:00:04.5Z'),
    messageEvent('e6', '2024-05-01T10:00:05Z', 'thanks'),
  ];
}

/** The ids of sampleHistory() in TIMESTAMP order. */
export const SAMPLE_TIMESTAMP_ORDER = ['e1', 'e3', 'e2', 'e4', 'e5', 'e6'];
