import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../../src/agent-server/agent/llm/index.js';
import { toolImagesAsUserMessages } from '../../../../src/agent-server/agent/llm/dialects/tool-images.js';
import { promptToolMessages } from '../../../../src/agent-server/agent/llm/prompt-tool-calling.js';

/** A tool result's images (a browser screenshot) in the dialects whose tool results cannot carry them as parts. */
const SHOT = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo' } };
const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'browser_get_state', arguments: '{}' } });
const TURN: ChatMessage[] = [
  { role: 'user', content: 'look' },
  { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] },
  { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'state one' }, SHOT] },
  { role: 'tool', tool_call_id: 'c2', content: 'state two' },
  { role: 'assistant', content: 'seen' },
];

describe('tool result images', () => {
  it('follow the results of their turn in a user message for Chat Completions, each under its call id', () => {
    expect(toolImagesAsUserMessages(TURN)).toEqual([
      TURN[0],
      TURN[1],
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'state one' }] },
      TURN[3],
      { role: 'user', content: [{ type: 'text', text: 'Image(s) from the result of tool call c1:' }, SHOT] },
      TURN[4],
    ]);
  });

  it('leave messages without images as they are', () => {
    const plain = TURN.filter((message) => message.role !== 'tool' || typeof message.content === 'string');
    expect(toolImagesAsUserMessages(plain)).toEqual(plain);
  });

  it('stay beside the result text when tools are described in the prompt', () => {
    const messages = promptToolMessages(TURN, []);
    expect(messages[3]).toEqual({ role: 'user', content: [{ type: 'text', text: 'EXECUTION RESULT of [browser_get_state]:\nstate one' }, SHOT] });
    expect(messages[4]).toEqual({ role: 'user', content: 'EXECUTION RESULT of [browser_get_state]:\nstate two' });
  });
});
