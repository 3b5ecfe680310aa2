import type { EventLog } from '../store/index.js';

/** What the event stream needs from the conversations (app.ts builds it from the verbs). */
export interface EventStreamSource {
  /** The conversation's event log, or undefined when there is no such conversation. */
  eventLog(conversationId: string): Promise<EventLog | undefined>;
  /** The serialized conversation state sent as the `full_state` frame. */
  fullState(conversationId: string): Promise<unknown>;
  /** Queues a message a client sent over the socket (a SendMessageRequest) and runs the agent. */
  sendMessage(conversationId: string, message: unknown): Promise<void>;
  /** Hears the frames sent live only (streamed LLM answers); returns the unsubscribe function. */
  onLiveFrame(conversationId: string, listener: (frame: object) => void): () => void;
}
