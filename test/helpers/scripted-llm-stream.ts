/**
 * The scripted LLM's answers streamed, as the providers stream them when a request says
 * `stream: true`: OpenAI Chat Completions chunks ending with `[DONE]`, and Anthropic's typed
 * Messages events. Texts are cut into pieces of a few characters so that a client sees many.
 */
const PIECE = 3;

export interface SseFrame {
  event?: string;
  data: unknown;
}

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += PIECE) out.push(text.slice(at, at + PIECE));
  return out;
}

interface ChatBody {
  id: string;
  model: string;
  created: number;
  choices: { finish_reason: string; message: { content: string | null; reasoning_content?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] } }[];
  usage: unknown;
}

export function chatStream(whole: unknown): SseFrame[] {
  const body = whole as ChatBody;
  const choice = body.choices[0]!;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): SseFrame => ({
    data: { id: body.id, object: 'chat.completion.chunk', created: body.created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] },
  });
  const frames: SseFrame[] = [chunk({ role: 'assistant', content: '' })];
  for (const text of pieces(choice.message.reasoning_content ?? '')) frames.push(chunk({ reasoning_content: text }));
  for (const text of pieces(choice.message.content ?? '')) frames.push(chunk({ content: text }));
  for (const [index, call] of (choice.message.tool_calls ?? []).entries()) {
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    for (const text of pieces(call.function.arguments)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: text } }] }));
  }
  frames.push(chunk({}, choice.finish_reason));
  frames.push({ data: { id: body.id, object: 'chat.completion.chunk', created: body.created, model: body.model, choices: [], usage: body.usage } });
  frames.push({ data: '[DONE]' });
  return frames;
}

interface AnthropicBody {
  content: (Record<string, unknown> & { type: string })[];
  stop_reason: string;
  usage: { output_tokens: number } & Record<string, number>;
}

export function anthropicStream(whole: unknown): SseFrame[] {
  const body = whole as AnthropicBody;
  const event = (type: string, fields: Record<string, unknown>): SseFrame => ({ event: type, data: { type, ...fields } });
  const frames: SseFrame[] = [event('message_start', { message: { ...body, content: [], stop_reason: null, usage: { ...body.usage, output_tokens: 1 } } })];
  for (const [index, block] of body.content.entries()) {
    const delta = (fields: Record<string, unknown>): SseFrame => event('content_block_delta', { index, delta: fields });
    if (block.type === 'text') {
      frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const text of pieces(String(block.text))) frames.push(delta({ type: 'text_delta', text }));
    } else if (block.type === 'thinking') {
      frames.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      for (const thinking of pieces(String(block.thinking))) frames.push(delta({ type: 'thinking_delta', thinking }));
      if (typeof block.signature === 'string') frames.push(delta({ type: 'signature_delta', signature: block.signature }));
    } else if (block.type === 'tool_use') {
      frames.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
      for (const json of pieces(JSON.stringify(block.input))) frames.push(delta({ type: 'input_json_delta', partial_json: json }));
    } else {
      frames.push(event('content_block_start', { index, content_block: block }));
    }
    frames.push(event('content_block_stop', { index }));
  }
  frames.push(event('message_delta', { delta: { stop_reason: body.stop_reason, stop_sequence: null }, usage: { output_tokens: body.usage.output_tokens } }));
  frames.push(event('message_stop', {}));
  return frames;
}
