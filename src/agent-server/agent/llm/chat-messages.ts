/**
 * The request side of OpenAI chat completions: the messages and tools the agent loop sends. These
 * are wire shapes, kept as plain types; the loop builds them from events, so nothing here is parsed.
 */

export interface ChatTextPart {
  type: 'text';
  text: string;
  /** A prompt cache breakpoint; set by the dialects when `caching_prompt` is on. */
  cache_control?: { type: 'ephemeral' };
}

export interface ChatImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export type ChatContentPart = ChatTextPart | ChatImagePart;

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string | null;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** OpenAI Responses' reasoning item, kept so that the model gets it back on the next turn. */
export interface ReasoningItem {
  id?: string | null;
  summary?: string[];
  content?: string[] | null;
  encrypted_content?: string | null;
  status?: string | null;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatSystemMessage {
  role: 'system';
  content: string | ChatTextPart[];
}

export interface ChatUserMessage {
  role: 'user';
  content: string | ChatContentPart[];
  name?: string;
}

/**
 * `reasoning_content` and `thinking_blocks` are not OpenAI fields, but LiteLLM-style proxies read
 * them back so that Anthropic models see their own signed thinking on the next turn.
 */
export interface ChatAssistantMessage {
  role: 'assistant';
  content: string | ChatTextPart[] | null;
  tool_calls?: ChatToolCall[];
  reasoning_content?: string;
  thinking_blocks?: (ThinkingBlock | RedactedThinkingBlock)[];
  responses_reasoning_item?: ReasoningItem;
}

/** Parts beyond text (images) are sent where the dialect can carry them in a tool result. */
export interface ChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | ChatContentPart[];
  name?: string;
}

export type ChatMessage = ChatSystemMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;

/** A function tool; `parameters` is a JSON Schema object. */
export interface ChatTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters: Record<string, unknown>;
    strict?: boolean;
  };
}
