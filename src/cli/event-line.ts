/** One readable line per conversation event: time, source, kind, and a short text of what it says. */
import type { ConversationEvent } from '../client/index.js';
import { formatTime, oneLine } from './format.js';

const TEXT_LIMIT = 100;
/** Wide enough for every kind name but ConversationStateUpdateEvent, which then pushes the text. */
const KIND_WIDTH = 24;
const SOURCE_WIDTH = 11;

export function formatEventLine(event: ConversationEvent): string {
  const source = event.source ?? '';
  return [formatTime(event.timestamp), source.padEnd(SOURCE_WIDTH), event.kind.padEnd(KIND_WIDTH), oneLine(eventText(event), TEXT_LIMIT)]
    .join('  ')
    .trimEnd();
}

export function eventText(event: ConversationEvent): string {
  switch (event.kind) {
    case 'MessageEvent':
      return contentText([...event.llm_message.content, ...event.extended_content]);
    case 'ActionEvent':
      return `${event.tool_name}: ${event.summary ?? fieldsText(event.action)}`;
    case 'ObservationEvent': {
      const observation = event.observation as Record<string, unknown>;
      const exit = typeof observation.exit_code === 'number' ? `exit ${observation.exit_code}: ` : '';
      return `${event.tool_name}: ${exit}${contentText(Array.isArray(observation.content) ? observation.content : [])}`;
    }
    case 'AgentErrorEvent':
      return `${event.tool_name}: ${event.error}`;
    case 'ConversationErrorEvent':
      return `${event.code}: ${event.detail}`;
    case 'UserRejectObservation':
      return `${event.tool_name}: ${event.rejection_reason}`;
    case 'ConversationStateUpdateEvent':
      return `${event.key} = ${JSON.stringify(event.value) ?? 'null'}`;
    case 'SystemPromptEvent':
      return `${event.tools.length} tools`;
    case 'Condensation':
      return `forgot ${event.forgotten_event_ids.length} events${event.summary ? `: ${event.summary}` : ''}`;
    case 'CondensationSummaryEvent':
      return event.summary;
    case 'LLMCompletionLogEvent':
      return `${event.model_name} ${event.filename}`;
    case 'TokenEvent':
      return `${event.prompt_token_ids.length} prompt tokens, ${event.response_token_ids.length} response tokens`;
    case 'CondensationRequest':
    case 'PauseEvent':
      return '';
  }
}

function contentText(items: readonly unknown[]): string {
  return items
    .map((item) => {
      const content = item as { type?: string; text?: unknown };
      return content.type === 'text' && typeof content.text === 'string' ? content.text : `[${content.type ?? 'content'}]`;
    })
    .join(' ');
}

/** The telling fields of an action (command, path, message, ...), in that order. */
function fieldsText(action: unknown): string {
  if (action === null || typeof action !== 'object') return '';
  const fields = action as Record<string, unknown>;
  return ['command', 'path', 'file_path', 'dir_path', 'pattern', 'url', 'message', 'thought', 'text']
    .map((name) => fields[name])
    .filter((value): value is string => typeof value === 'string' && value !== '')
    .join(' ');
}
