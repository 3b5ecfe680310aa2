import { describe, expect, it } from 'vitest';
import { planCondensation, summaryPrompt, validateCondenserOptions } from '../../../../src/agent-server/agent/loop/condensation.js';
import type { ViewItem } from '../../../../src/agent-server/agent/loop/llm-view.js';
import { observation, systemPrompt, think, userMessage } from './event-builders.js';

const users = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => userMessage(`u${from + i}`, `message ${from + i}`));

describe('planning a condensation', () => {
  it('does nothing while the view is within the limit', () => {
    expect(planCondensation([systemPrompt(), ...users(1, 10)], { maxEvents: 10, keepFirst: 2 })).toBeNull();
  });

  it('keeps the head and about half the limit of recent items, and forgets the middle', () => {
    const view = [systemPrompt(), ...users(1, 12)];
    const plan = planCondensation(view, { maxEvents: 10, keepFirst: 2 });
    expect(plan?.forgottenEventIds).toEqual(['u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9']);
    expect(plan?.summaryOffset).toBe(2);
    expect(plan?.previousSummary).toBeNull();
  });

  it('forgets a response whose calls reach into the middle whole, results in the recent part included', () => {
    const a = think('a', 'ca', 'r1');
    const b = think('b', 'cb', 'r1');
    const view = [systemPrompt(), userMessage('u1', 'task'), ...users(2, 8), a, b, observation('oa', a), observation('ob', b)];
    const plan = planCondensation(view, { maxEvents: 10, keepFirst: 2 });
    expect(plan?.forgottenEventIds).toEqual(['u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'a', 'b', 'oa', 'ob']);
  });

  it('keeps a response whose calls start in the head whole', () => {
    const a = think('a', 'ca', 'r1');
    const view = [systemPrompt(), a, observation('oa', a), ...users(1, 10)];
    const plan = planCondensation(view, { maxEvents: 10, keepFirst: 2 });
    expect(plan?.forgottenEventIds).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7']);
  });

  it('never forgets the system prompt and hands over the summary shown now', () => {
    const view: ViewItem[] = [systemPrompt(), { kind: 'CondensationSummary', summary: 'so far' }, ...users(1, 11)];
    const plan = planCondensation(view, { maxEvents: 10, keepFirst: 0 });
    expect(plan?.forgottenEventIds).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6']);
    expect(plan?.previousSummary).toBe('so far');
    expect(plan?.summaryOffset).toBe(1);
    expect(summaryPrompt(plan!)).toContain('<PREVIOUS SUMMARY>\nso far\n</PREVIOUS SUMMARY>');
  });

  it('quotes each forgotten event in the summary prompt', () => {
    const a = think('a', 'ca', 'r1');
    const plan = planCondensation([systemPrompt(), userMessage('u1', 'task'), a, observation('oa', a, 'found it'), ...users(2, 10)], {
      maxEvents: 10,
      keepFirst: 2,
    });
    const prompt = summaryPrompt(plan!);
    expect(prompt).toContain('agent called think with {"thought":"a"}');
    expect(prompt).toContain('result of think: found it');
    expect(prompt).toContain('user message (user): message 2');
  });

  it('refuses options that leave no room for recent items', () => {
    expect(() => validateCondenserOptions({ maxEvents: 6, keepFirst: 2 })).toThrow(RangeError);
    expect(() => validateCondenserOptions({ maxEvents: 10, keepFirst: -1 })).toThrow(RangeError);
    expect(() => validateCondenserOptions({ maxEvents: 8, keepFirst: 2 })).not.toThrow();
  });
});
