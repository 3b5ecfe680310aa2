/**
 * The LLMCompletionLogEvent of one LLM call: what OpenHands writes to a completion log file when
 * `log_completions` is on, sent to clients as an event instead. The request holds what was sent
 * (messages and tools, never the api key, which only travels in a header) and the raw answer.
 */
import { randomBytes } from 'node:crypto';
import { LLMCompletionLogEventSchema, type LLMCompletionLogEvent } from '../../../events/index.js';
import type { ChatMessage, ChatTool, LlmResponse } from '../llm/index.js';

export interface CompletionRequest {
  messages: ChatMessage[];
  tools?: ChatTool[];
}

export function completionLogEvent(request: CompletionRequest, response: LlmResponse, at: Date, usageId: string): LLMCompletionLogEvent {
  const seconds = at.getTime() / 1000;
  return LLMCompletionLogEventSchema.parse({
    kind: 'LLMCompletionLogEvent',
    // OpenHands' file name: model (slashes made safe), time, and a few random hex digits.
    filename: `${response.model.replaceAll('/', '__')}-${seconds.toFixed(3)}-${randomBytes(2).toString('hex')}.json`,
    log_data: JSON.stringify({
      messages: request.messages,
      tools: request.tools ?? [],
      response: response.raw,
      usage: response.usage,
      timestamp: seconds,
    }),
    model_name: response.model,
    usage_id: usageId,
  });
}

