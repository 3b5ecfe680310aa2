/** One server-sent event: its `event:` name (empty when none) and its joined `data:` lines. */
export interface SseMessage {
  event: string;
  data: string;
}

/**
 * Reads a text/event-stream body message by message as it arrives (WHATWG's rules: a blank line
 * ends a message, `data:` lines join with newlines, comments and other fields are skipped).
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  const take = (line: string): SseMessage | null => {
    if (line === '') {
      const message = data.length > 0 ? { event, data: data.join('\n') } : null;
      event = '';
      data = [];
      return message;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    return null;
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: RegExpExecArray | null;
    while ((newline = /\r\n|\r|\n/.exec(buffer)) !== null) {
      const message = take(buffer.slice(0, newline.index));
      buffer = buffer.slice(newline.index + newline[0].length);
      if (message) yield message;
    }
  }
  const last = take(buffer + decoder.decode());
  const final = last ?? take('');
  if (final) yield final;
}
