/**
 * The text the `body` search filter matches against: for a MessageEvent, the lower-cased text items
 * of `llm_message.content` and `extended_content`, joined by newlines; null for every other kind.
 * It reads stored events as plain JSON and so tolerates any shape rather than trusting a parse.
 */
/** Names what messageSearchText returns: change it with the function, so checkpointed texts are rebuilt. */
export const MESSAGE_SEARCH_TEXT_VERSION = 'message-text-1';

export function messageSearchText(event: { kind: string; [key: string]: unknown }): string | null {
  if (event.kind !== 'MessageEvent') return null;
  const llmMessage = event['llm_message'];
  const content = isRecord(llmMessage) ? llmMessage['content'] : undefined;
  const texts = [...textsOf(content), ...textsOf(event['extended_content'])];
  return texts.join('\n').toLowerCase();
}

function textsOf(items: unknown): string[] {
  if (!Array.isArray(items)) return [];
  return items.flatMap((item: unknown) => {
    if (!isRecord(item)) return [];
    const { type, text } = item;
    return (type === undefined || type === 'text') && typeof text === 'string' ? [text] : [];
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
