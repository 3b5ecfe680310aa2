import { describe, expect, it } from 'vitest';
import { MessageEventSchema, ObservationEventSchema } from '../../../../src/events/index.js';
import { buildView, viewMessages } from '../../../../src/agent-server/agent/loop/llm-view.js';
import {
  agentError,
  agentMessage,
  condensation,
  observation,
  rejection,
  status,
  systemPrompt,
  think,
  userMessage,
} from './event-builders.js';

describe('the view of the history', () => {
  it('puts the system prompt first and leaves out what the LLM never sees', () => {
    const history = [userMessage('u1', 'hi'), systemPrompt(), status('running'), agentMessage('a1', 'hello', 'r1')];
    expect(buildView(history).map((item) => ('id' in item ? item.id : item.kind))).toEqual(['system', 'u1', 'a1']);
  });

  it('drops every forgotten event and shows the latest summary at its offset', () => {
    const history = [
      systemPrompt(),
      userMessage('u1', 'task'),
      userMessage('u2', 'old'),
      condensation(['u2'], 'first summary', 2),
      userMessage('u3', 'older'),
      userMessage('u4', 'recent'),
      condensation(['u3'], 'second summary', 2),
    ];
    expect(buildView(history)).toEqual([
      history[0],
      history[1],
      { kind: 'CondensationSummary', summary: 'second summary' },
      history[5],
    ]);
  });

  it('shows no summary when the condensation has none', () => {
    const history = [systemPrompt(), userMessage('u1', 'task'), userMessage('u2', 'old'), condensation(['u2'], null, null)];
    expect(buildView(history)).toEqual([history[0], history[1]]);
  });
});

describe('the view as chat messages', () => {
  it('makes one assistant message of the calls of one response, followed by their results', () => {
    const first = think('t1', 'c1', 'r1', { thought: 'two at once' });
    const second = think('t2', 'c2', 'r1');
    const messages = viewMessages([systemPrompt(), userMessage('u1', 'go'), first, second, observation('o1', first), agentError('e2', 'c2')]);
    expect(messages).toEqual([
      { role: 'system', content: 'You are a test agent.' },
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'two at once',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'think', arguments: '{"thought":"t1"}' } },
          { id: 'c2', type: 'function', function: { name: 'think', arguments: '{"thought":"t2"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'result of t1' },
      { role: 'tool', tool_call_id: 'c2', content: 'it broke' },
    ]);
  });

  it('holds back a message written while calls were running until their last result', () => {
    const first = think('t1', 'c1', 'r1');
    const second = think('t2', 'c2', 'r1');
    const messages = viewMessages([first, second, observation('o1', first), userMessage('u2', 'by the way'), rejection('x2', second)]);
    expect(messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'tool', 'user']);
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'c2', content: 'Action rejected: User rejected the action' });
  });

  it('leaves out a result whose call is not in the view, and a second result for one call', () => {
    const action = think('t1', 'c1', 'r1');
    const messages = viewMessages([observation('orphan', think('gone', 'c0', 'r0')), action, observation('o1', action), agentError('e1', 'c1')]);
    expect(messages).toEqual([
      expect.objectContaining({ role: 'assistant' }),
      { role: 'tool', tool_call_id: 'c1', content: 'result of t1' },
    ]);
  });

  it('marks the output of a failed tool, as OpenHands does', () => {
    const action = think('t1', 'c1', 'r1');
    const failed = ObservationEventSchema.parse({
      ...observation('o1', action),
      observation: { kind: 'ThinkObservation', is_error: true, content: [{ text: 'no such file' }] },
    });
    expect(viewMessages([action, failed])[1]).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: '[An error occurred during execution.]\nno such file',
    });
  });

  it('sends images of user messages as image parts, extended content included', () => {
    const message = MessageEventSchema.parse({
      kind: 'MessageEvent',
      source: 'user',
      llm_message: { role: 'user', content: [{ text: 'look' }, { image_urls: ['data:image/png;base64,AAAA'] }] },
      extended_content: [{ text: 'context' }],
    });
    expect(viewMessages([message])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'text', text: 'context' },
        ],
      },
    ]);
  });

  it('keeps the reasoning of an agent answer and sends the dynamic context as a second system block', () => {
    const answer = MessageEventSchema.parse({
      ...agentMessage('a1', 'the answer', 'r1'),
      llm_message: {
        role: 'assistant',
        content: [{ text: 'the answer' }],
        reasoning_content: 'because',
        thinking_blocks: [{ thinking: 'hmm', signature: 'sig' }],
      },
    });
    const prompt = { ...systemPrompt('static'), dynamic_context: { type: 'text' as const, text: 'dynamic', cache_prompt: false } };
    expect(viewMessages([prompt, answer])).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'static' }, { type: 'text', text: 'dynamic' }] },
      {
        role: 'assistant',
        content: 'the answer',
        reasoning_content: 'because',
        thinking_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }],
      },
    ]);
  });
});

describe('images in tool results', () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUg';

  it("sends a browser observation's screenshot and an observation's image content after its text", () => {
    const call = think('t1', 'c1', 'r1');
    const browser = ObservationEventSchema.parse({
      ...observation('o1', call),
      observation: { kind: 'BrowserObservation', content: [{ text: 'the page' }, { image_urls: ['data:image/gif;base64,R0lGODlh'] }], screenshot_data: PNG },
    });
    const [, , tool] = viewMessages([userMessage('u1', 'go'), call, browser]);
    expect(tool).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: [
        { type: 'text', text: 'the page' },
        { type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGODlh' } },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      ],
    });
  });

  it('keeps a result without images plain text', () => {
    const call = think('t1', 'c1', 'r1');
    const plain = ObservationEventSchema.parse({ ...observation('o1', call), observation: { kind: 'BrowserObservation', content: [{ text: 'no shot' }] } });
    expect(viewMessages([userMessage('u1', 'go'), call, plain])[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'no shot' });
  });
});
