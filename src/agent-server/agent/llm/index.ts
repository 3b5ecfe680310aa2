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
  ReasoningItem,
  RedactedThinkingBlock,
  ThinkingBlock,
} from './chat-messages.js';
export { createLlmClient, LLM_DEFAULTS, type LlmAnswer, type LlmClient, type LlmClientDeps, type LlmRequest } from './client.js';
export { llmConfigFrom, type CompletionOptions, type LlmConfig } from './config.js';
export { LlmError, type LlmErrorCode } from './llm-error.js';
export { resolveRoute, type Route } from './provider.js';
export { providerOf } from '../../../contracts/llm-providers.js';
export type { LlmResponse, LlmToolCall, LlmUsage } from './response.js';
export type { LlmDelta } from './streaming/delta.js';
