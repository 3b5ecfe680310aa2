/**
 * A piece of an answer as the model streams it: text, reasoning, or a piece of a tool call's
 * name or arguments (`index` tells the calls of one answer apart).
 */
export type LlmDelta =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; index: number; id: string | null; name: string | null; arguments: string };

/**
 * Folds a dialect's stream messages into the body the same call would have answered without
 * streaming, so that the dialect's own parser reads it and the events made from it are the same.
 */
export interface StreamAssembler {
  /** Takes one SSE message; returns the deltas it carried. */
  push(event: string, data: unknown): LlmDelta[];
  /** The whole answer, as the non-streamed body. */
  body(): unknown;
}
