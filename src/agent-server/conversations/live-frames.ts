import { randomUUID } from 'node:crypto';
import type { LlmDelta } from '../agent/llm/index.js';
import { nowTimestamp } from '../../events/index.js';

/**
 * OpenHands' StreamingDeltaEvent, the agent-server's transient frame for a piece of a streamed
 * answer: text or reasoning only (tool-call pieces reach the subscribers as the ActionEvent).
 */
export function streamingDeltaEvent(delta: LlmDelta): object | null {
  if (delta.type === 'tool_call') return null;
  return {
    kind: 'StreamingDeltaEvent',
    id: randomUUID(),
    timestamp: nowTimestamp(),
    source: 'agent',
    content: delta.type === 'content' ? delta.text : null,
    reasoning_content: delta.type === 'reasoning' ? delta.text : null,
  };
}

/**
 * Frames for the live WebSocket subscribers of a conversation that are not events: the pieces of
 * a streamed LLM answer. They are never stored (the event log holds the final events only), so a
 * subscriber hears those published while it is connected and no others.
 */
export class LiveFrames {
  private readonly listeners = new Map<string, Set<(frame: object) => void>>();

  publish(conversationId: string, frame: object): void {
    for (const listener of this.listeners.get(conversationId) ?? []) listener(frame);
  }

  /** Returns the unsubscribe function. */
  subscribe(conversationId: string, listener: (frame: object) => void): () => void {
    const set = this.listeners.get(conversationId) ?? new Set();
    set.add(listener);
    this.listeners.set(conversationId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(conversationId) === set) this.listeners.delete(conversationId);
    };
  }
}
