/**
 * The settings that change the messages whatever the dialect: `max_message_chars` (the middle of a
 * longer text is cut, as OpenHands truncates observations), `disable_vision` (images left out) and
 * `force_string_serializer` (contents as plain strings, for servers that take no lists of parts).
 */
import type { ChatContentPart, ChatMessage } from './chat-messages.js';
import type { CompletionOptions } from './config.js';

const TRUNCATION_NOTICE = '\n<response clipped><NOTE>Due to the max output limit, only part of this content has been shown.</NOTE>\n';

export function prepareMessages(messages: readonly ChatMessage[], options: CompletionOptions): ChatMessage[] {
  const limit = options.max_message_chars ?? null;
  const clip = (text: string): string => (limit === null ? text : clipMiddle(text, limit));
  return messages.map((message): ChatMessage => {
    const content = message.content;
    if (content === null) return message;
    if (typeof content === 'string') return { ...message, content: clip(content) } as ChatMessage;
    const parts = (content as ChatContentPart[]).flatMap((part): ChatContentPart[] => {
      if (part.type === 'image_url') return options.disable_vision ? [] : [part];
      return [{ ...part, text: clip(part.text) }];
    });
    if (options.force_string_serializer) {
      return { ...message, content: parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n') } as ChatMessage;
    }
    return { ...message, content: parts } as ChatMessage;
  });
}

export function clipMiddle(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const half = Math.floor(limit / 2);
  return `${text.slice(0, half)}${TRUNCATION_NOTICE}${text.slice(text.length - half)}`;
}
