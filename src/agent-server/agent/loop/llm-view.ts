/**
 * What the LLM sees of a conversation: the view (stored events, minus those a Condensation forgot,
 * with its summary in their place) and that view as chat completions messages.
 *
 * The stored history is never changed; the view is recomputed from it before every LLM call.
 */
import type {
  ActionEvent,
  AgentErrorEvent,
  Condensation,
  ContentItem,
  Event,
  MessageEvent,
  MessageToolCall,
  ObservationEvent,
  SystemPromptEvent,
  UserRejectObservation,
} from '../../../events/index.js';
import { observationImageUrls } from './observation-images.js';
import type { ChatAssistantMessage, ChatContentPart, ChatMessage, ChatTextPart, ChatToolCall } from '../llm/index.js';

export type ToolResultEvent = ObservationEvent | AgentErrorEvent | UserRejectObservation;

/** The summary of forgotten events, shown to the LLM as a user message. */
export interface SummaryItem {
  kind: 'CondensationSummary';
  summary: string;
}

export type ViewItem = SystemPromptEvent | MessageEvent | ActionEvent | ToolResultEvent | SummaryItem;

/** Shown before the output of a tool that reported an error, as OpenHands does. */
const TOOL_ERROR_HEADER = '[An error occurred during execution.]';

export function isToolResult(event: { kind: string }): event is ToolResultEvent {
  return event.kind === 'ObservationEvent' || event.kind === 'AgentErrorEvent' || event.kind === 'UserRejectObservation';
}

function isConversationEvent(event: Event): event is MessageEvent | ActionEvent | ToolResultEvent {
  return event.kind === 'MessageEvent' || event.kind === 'ActionEvent' || isToolResult(event);
}

/**
 * The system prompt first (it is recorded at the first run, possibly after the first user
 * message), then the conversation in log order. Forgetting is cumulative over every Condensation;
 * only the latest one's summary is shown, at its `summary_offset`.
 */
export function buildView(history: readonly Event[]): ViewItem[] {
  const forgotten = new Set<string>();
  let latest: Condensation | undefined;
  let systemPrompt: SystemPromptEvent | undefined;
  for (const event of history) {
    if (event.kind === 'Condensation') {
      for (const id of event.forgotten_event_ids) forgotten.add(id);
      latest = event;
    } else if (event.kind === 'SystemPromptEvent') {
      systemPrompt ??= event;
    }
  }
  const view: ViewItem[] = systemPrompt ? [systemPrompt] : [];
  for (const event of history) {
    if (isConversationEvent(event) && !forgotten.has(event.id)) view.push(event);
  }
  if (latest?.summary != null && latest.summary_offset != null) {
    view.splice(Math.min(latest.summary_offset, view.length), 0, { kind: 'CondensationSummary', summary: latest.summary });
  }
  return view;
}

/**
 * The view as chat messages. The actions of one LLM response (one `llm_response_id`) become one
 * assistant message with all their tool calls. Chat completions wants the tool results right
 * after that message, so a message recorded while the calls were still running (a user writing
 * mid-step) is held back until the last result. A result whose call is not in the view cannot be
 * sent and is left out.
 */
export function viewMessages(view: readonly ViewItem[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const heldBack: ChatMessage[] = [];
  const assistantOfResponse = new Map<string, ChatAssistantMessage & { tool_calls: ChatToolCall[] }>();
  const openCalls = new Set<string>();

  for (const item of view) {
    if (item.kind === 'ActionEvent') {
      let assistant = assistantOfResponse.get(item.llm_response_id);
      if (assistant === undefined) {
        const thought = textOf(item.thought);
        assistant = { ...assistantFields(thought || null, item), tool_calls: [] };
        assistantOfResponse.set(item.llm_response_id, assistant);
        messages.push(assistant);
      }
      assistant.tool_calls.push(chatToolCall(item.tool_call));
      openCalls.add(item.tool_call_id);
    } else if (isToolResult(item)) {
      if (!openCalls.delete(item.tool_call_id)) continue;
      messages.push({ role: 'tool', tool_call_id: item.tool_call_id, content: toolResultContent(item) });
      if (openCalls.size === 0) messages.push(...heldBack.splice(0));
    } else {
      (openCalls.size > 0 ? heldBack : messages).push(chatMessage(item));
    }
  }
  messages.push(...heldBack);
  return messages;
}

function chatMessage(item: SystemPromptEvent | MessageEvent | SummaryItem): ChatMessage {
  switch (item.kind) {
    case 'CondensationSummary':
      return { role: 'user', content: item.summary };
    case 'SystemPromptEvent': {
      if (item.dynamic_context === null) return { role: 'system', content: item.system_prompt.text };
      return { role: 'system', content: [textPart(item.system_prompt.text), textPart(item.dynamic_context.text)] };
    }
    case 'MessageEvent': {
      const message = item.llm_message;
      const content = [...message.content, ...item.extended_content];
      if (message.role === 'assistant') return assistantFields(textOf(content), message);
      if (message.role === 'system') return { role: 'system', content: textOf(content) };
      // A tool-role message without a call of its own cannot be sent as a tool result.
      return { role: 'user', content: userContent(content) };
    }
  }
}

/** What the model gave besides text (an action's or a message's), sent back so it sees its own reasoning. */
type Reasoning = Pick<ActionEvent, 'reasoning_content' | 'thinking_blocks' | 'responses_reasoning_item'>;

function assistantFields(text: string | null, { reasoning_content: reasoning, thinking_blocks: thinkingBlocks, responses_reasoning_item: item }: Reasoning): ChatAssistantMessage {
  return {
    role: 'assistant',
    content: text,
    ...(reasoning !== null ? { reasoning_content: reasoning } : {}),
    ...(thinkingBlocks.length > 0 ? { thinking_blocks: thinkingBlocks } : {}),
    ...(item !== null ? { responses_reasoning_item: item } : {}),
  };
}

/** Plain text when there is only text (what every OpenAI-compatible server takes); parts with images. */
function userContent(content: readonly ContentItem[]): string | ChatContentPart[] {
  if (content.every((item) => item.type === 'text')) return textOf(content);
  return content.flatMap((item): ChatContentPart[] =>
    item.type === 'text' ? [textPart(item.text)] : item.image_urls.map((url) => ({ type: 'image_url', image_url: { url } })),
  );
}

/** A tool result's text, with its images after it as parts when it has any (a browser screenshot). */
function toolResultContent(result: ToolResultEvent): string | ChatContentPart[] {
  const text = toolResultText(result);
  const images = result.kind === 'ObservationEvent' ? observationImageUrls(result.observation) : [];
  if (images.length === 0) return text;
  return [textPart(text), ...images.map((url): ChatContentPart => ({ type: 'image_url', image_url: { url } }))];
}

function toolResultText(result: ToolResultEvent): string {
  switch (result.kind) {
    case 'ObservationEvent': {
      const text = textOf(result.observation.content);
      return result.observation.is_error ? `${TOOL_ERROR_HEADER}\n${text}` : text;
    }
    case 'AgentErrorEvent':
      return result.error;
    case 'UserRejectObservation':
      return `Action rejected: ${result.rejection_reason}`;
  }
}

/** Arguments the model wrote as broken JSON are kept in the event but cannot be sent back as they are. */
function chatToolCall(call: MessageToolCall): ChatToolCall {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: isJson(call.arguments) ? call.arguments : '{}' } };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function textOf(content: readonly ContentItem[]): string {
  return content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n');
}

function textPart(text: string): ChatTextPart {
  return { type: 'text', text };
}
