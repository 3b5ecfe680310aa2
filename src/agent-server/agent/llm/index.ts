export type {
  ChatAssistantMessage,
  ChatContentPart,
  ChatImagePart,
  ChatMessage,
  ChatSystemMessage,
  ChatTextPart,
  ChatTool,
  ChatToolCall,
  ChatToolMessage,
  ChatUserMessage,
  RedactedThinkingBlock,
  ThinkingBlock,
} from './chat-messages.js';
export { createLlmClient, LLM_DEFAULTS, type LlmClient, type LlmClientDeps, type LlmConfig, type LlmRequest } from './client.js';
export { LlmError, type LlmErrorCode } from './llm-error.js';
export { endpointModelName, type CompletionOptions } from './request-body.js';
export type { LlmResponse, LlmToolCall, LlmUsage } from './response.js';
