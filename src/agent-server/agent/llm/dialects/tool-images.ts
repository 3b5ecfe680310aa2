/**
 * OpenAI Chat Completions takes text only in a tool message (images there are refused), so a tool
 * result's images travel in a user message right after the results of that turn, each under a
 * line naming the call it came from.
 */
import type { ChatContentPart, ChatImagePart, ChatMessage, ChatTextPart } from '../chat-messages.js';

export function toolImagesAsUserMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pending: ChatContentPart[] = [];
  const flush = () => {
    if (pending.length > 0) out.push({ role: 'user', content: pending });
    pending = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flush();
    if (message.role !== 'tool' || typeof message.content === 'string') {
      out.push(message);
      continue;
    }
    const images = message.content.filter((part): part is ChatImagePart => part.type === 'image_url');
    if (images.length === 0) {
      out.push(message);
      continue;
    }
    const texts = message.content.filter((part): part is ChatTextPart => part.type === 'text');
    out.push({ ...message, content: texts.length > 0 ? texts : '' });
    pending.push({ type: 'text', text: `Image(s) from the result of tool call ${message.tool_call_id}:` }, ...images);
  }
  flush();
  return out;
}
