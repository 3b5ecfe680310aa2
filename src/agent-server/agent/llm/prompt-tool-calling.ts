/**
 * Tool calling for models without it (`native_tool_calling: false`), in OpenHands' prompt format:
 * the tools are described in the system prompt, past calls and results are written as text, and
 * the calls are read back out of the model's text:
 *
 *   <function=terminal>
 *   <parameter=command>ls</parameter>
 *   </function>
 */
import type { ChatContentPart, ChatMessage, ChatTool } from './chat-messages.js';
import type { LlmResponse, LlmToolCall } from './response.js';

/** Where the model stops: the text after a call's closing tag is never read. */
export const PROMPT_TOOL_STOP_WORDS = ['</function'];

export function describeTools(tools: readonly ChatTool[]): string {
  const functions = tools.map((tool, index) => {
    const schema = tool.function.parameters as { properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
    const required = new Set(schema.required ?? []);
    const parameters = Object.entries(schema.properties ?? {}).map(
      ([name, property], position) =>
        `  (${position + 1}) ${name} (${property.type ?? 'string'}, ${required.has(name) ? 'required' : 'optional'}): ${property.description ?? ''}`,
    );
    return [
      `---- BEGIN FUNCTION #${index + 1}: ${tool.function.name} ----`,
      `Description: ${tool.function.description ?? ''}`,
      'Parameters:',
      ...(parameters.length > 0 ? parameters : ['  No parameters are required for this function.']),
      `---- END FUNCTION #${index + 1} ----`,
    ].join('\n');
  });
  return [
    'You have access to the following functions:',
    '',
    ...functions,
    '',
    'If you choose to call a function ONLY reply in the following format with NO suffix:',
    '',
    '<function=example_function_name>',
    '<parameter=example_parameter_1>value_1</parameter>',
    '<parameter=example_parameter_2>',
    'a value over',
    'several lines',
    '</parameter>',
    '</function>',
    '',
    'Call at most one function per message, and always end the call with </function>.',
  ].join('\n');
}

/** The conversation with the tools in the system prompt and every call and result as text. */
export function promptToolMessages(messages: readonly ChatMessage[], tools: readonly ChatTool[]): ChatMessage[] {
  const description = describeTools(tools);
  const out: ChatMessage[] = [];
  let described = false;
  for (const message of messages) {
    if (message.role === 'system' && !described) {
      out.push({ role: 'system', content: `${textOf(message.content)}\n\n${description}` });
      described = true;
    } else if (message.role === 'assistant' && message.tool_calls?.length) {
      const calls = message.tool_calls.map((call) => callText(call.function.name, call.function.arguments));
      const { tool_calls: _calls, ...rest } = message;
      out.push({ ...rest, content: [textOf(message.content ?? ''), ...calls].filter((text) => text !== '').join('\n') });
    } else if (message.role === 'tool') {
      const name = toolNameOf(messages, message.tool_call_id);
      const result = `EXECUTION RESULT of [${name}]:\n${textOf(message.content)}`;
      const images = typeof message.content === 'string' ? [] : message.content.filter((part) => part.type === 'image_url');
      out.push({ role: 'user', content: images.length === 0 ? result : [{ type: 'text', text: result }, ...images] });
    } else {
      out.push(message);
    }
  }
  if (!described) out.unshift({ role: 'system', content: description });
  return out;
}

/** The calls written in the answer's text become tool calls; the text before them stays the content. */
export function readPromptToolCalls(response: LlmResponse, tools: readonly ChatTool[], newId: () => string): LlmResponse {
  const text = response.content ?? '';
  const start = text.indexOf('<function=');
  if (start === -1) return response;
  const calls: LlmToolCall[] = [];
  // A stop word may have cut the closing tag off.
  const pattern = /<function=([^>\s]+)>([\s\S]*?)(?:<\/function>|$)/g;
  for (const match of text.slice(start).matchAll(pattern)) {
    const name = match[1] ?? '';
    const tool = tools.find((candidate) => candidate.function.name === name);
    calls.push({ id: `toolu_${newId()}`, name, arguments: JSON.stringify(parameters(match[2] ?? '', tool)), origin: 'completion' });
  }
  const before = text.slice(0, start).trim();
  return { ...response, content: before === '' ? null : before, tool_calls: calls, finish_reason: 'tool_calls' };
}

function parameters(body: string, tool: ChatTool | undefined): Record<string, unknown> {
  const schema = (tool?.function.parameters ?? {}) as { properties?: Record<string, { type?: string }> };
  const values: Record<string, unknown> = {};
  for (const match of body.matchAll(/<parameter=([^>\s]+)>([\s\S]*?)<\/parameter>/g)) {
    const name = match[1] ?? '';
    const raw = (match[2] ?? '').replace(/^\n/, '').replace(/\n$/, '');
    values[name] = typed(raw, schema.properties?.[name]?.type);
  }
  return values;
}

/** A value the schema types as other than a string is read as JSON when it is JSON. */
function typed(raw: string, type: string | undefined): unknown {
  if (type === undefined || type === 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function callText(name: string, args: string): string {
  let values: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === 'object' && parsed !== null) values = parsed as Record<string, unknown>;
  } catch {
    // Broken arguments are shown as no parameters.
  }
  const lines = Object.entries(values).map(([key, value]) => `<parameter=${key}>${typeof value === 'string' ? value : JSON.stringify(value)}</parameter>`);
  return [`<function=${name}>`, ...lines, '</function>'].join('\n');
}

function toolNameOf(messages: readonly ChatMessage[], callId: string): string {
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    const call = message.tool_calls?.find((candidate) => candidate.id === callId);
    if (call) return call.function.name;
  }
  return 'tool';
}

function textOf(content: string | readonly ChatContentPart[]): string {
  return typeof content === 'string' ? content : content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}
