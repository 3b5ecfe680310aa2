import { describe, expect, it } from 'vitest';
import { createFinishTool, createThinkTool } from '../../../../src/agent-server/agent/tools/index.js';

describe('finish', () => {
  it('returns the final message as the observation content', async () => {
    const tool = createFinishTool();
    const parsed = tool.parseArguments('{"message": "All tests pass."}');
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.action).toEqual({ kind: 'FinishAction', message: 'All tests pass.' });
    expect(await tool.execute(parsed.action)).toEqual({
      kind: 'FinishObservation',
      content: [{ type: 'text', text: 'All tests pass.', cache_prompt: false }],
      is_error: false,
    });
  });
});

describe('think', () => {
  it('logs the thought and changes nothing', async () => {
    const tool = createThinkTool();
    const parsed = tool.parseArguments({ thought: 'Maybe the cache is stale.' });
    if (!parsed.ok) throw new Error(parsed.error);
    expect(await tool.execute(parsed.action)).toEqual({
      kind: 'ThinkObservation',
      content: [{ type: 'text', text: 'Your thought has been logged.', cache_prompt: false }],
      is_error: false,
    });
  });
});
