import type { ChatMessage, ChatTool } from '../chat-messages.js';
import type { LlmConfig } from '../config.js';
import type { ModelFeatures } from '../model-features.js';
import type { Route } from '../provider.js';
import type { LlmResponse, ParseContext } from '../response.js';
import type { StreamAssembler } from '../streaming/delta.js';

/** One call as a dialect sees it: messages already prepared (clipped, images dropped, ...). */
export interface DialectRequest {
  route: Route;
  config: LlmConfig;
  features: ModelFeatures;
  messages: ChatMessage[];
  tools: ChatTool[] | undefined;
  /** Where the model must stop (prompt-based tool calling). */
  stop: string[] | undefined;
}

/** One provider wire format: how a call is written, and how its answer is read back. */
export interface Dialect {
  body(request: DialectRequest): Record<string, unknown>;
  /** Headers the body's content asks for (a beta feature); the route's own come first. */
  headers?(request: DialectRequest): Record<string, string>;
  parse(raw: unknown, context: ParseContext): LlmResponse;
  /** How the dialect streams, when it can: the body fields that ask for it, and its reader. */
  stream?: {
    fields: Record<string, unknown>;
    assembler(): StreamAssembler;
  };
}

/** Drops the fields left undefined or null: a body names only what was set. */
export function defined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null));
}

/**
 * `litellm_extra_body` goes first so that it can add fields but never replace the model, the
 * messages or the tools.
 */
export function withExtraBody(config: LlmConfig, body: Record<string, unknown>): Record<string, unknown> {
  return { ...config.litellm_extra_body, ...body };
}
