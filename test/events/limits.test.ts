import { describe, expect, it } from 'vitest';
import { ActionSchema, CriticResultSchema, EventSchema } from '../../src/events/index.js';

interface Bound {
  field: string;
  accepts: (value: number) => boolean;
  valid: number[];
  invalid: number[];
}

/** Spec section 8: each bounded field, with values at and just past its edges. */
const bounds: Bound[] = [
  {
    field: 'CriticResult.score',
    accepts: (score) => CriticResultSchema.safeParse({ score, message: null }).success,
    valid: [0, 0.5, 1],
    invalid: [-0.01, 1.01, -1, Number.NaN, Number.POSITIVE_INFINITY],
  },
  {
    field: 'MessageEvent.critic_result.score',
    accepts: (score) =>
      EventSchema.safeParse({
        kind: 'MessageEvent',
        source: 'agent',
        llm_message: { role: 'assistant' },
        critic_result: { score, message: 'm' },
      }).success,
    valid: [0, 1],
    invalid: [-0.01, 1.01],
  },
  {
    field: 'Condensation.summary_offset',
    accepts: (summary_offset) =>
      EventSchema.safeParse({ kind: 'Condensation', llm_response_id: 'r', summary_offset }).success,
    valid: [0, 1, 1000],
    invalid: [-1, 0.5],
  },
  {
    field: 'BrowserClickAction.index',
    accepts: (index) => ActionSchema.safeParse({ kind: 'BrowserClickAction', index }).success,
    valid: [0, 7],
    invalid: [-1, 0.5],
  },
  {
    field: 'BrowserTypeAction.index',
    accepts: (index) => ActionSchema.safeParse({ kind: 'BrowserTypeAction', index, text: 'x' }).success,
    valid: [0, 7],
    invalid: [-1, 0.5],
  },
  {
    field: 'BrowserGetContentAction.start_from_char',
    accepts: (start_from_char) =>
      ActionSchema.safeParse({ kind: 'BrowserGetContentAction', start_from_char }).success,
    valid: [0, 7],
    invalid: [-1, 0.5],
  },
];

describe.each(bounds.map((b) => [b.field, b] as const))('%s', (_field, bound) => {
  it.each(bound.valid)('accepts %d', (value) => {
    expect(bound.accepts(value)).toBe(true);
  });

  it.each(bound.invalid)('refuses %d', (value) => {
    expect(bound.accepts(value)).toBe(false);
  });
});

describe('CriticResult', () => {
  it('requires message, which may be null', () => {
    expect(CriticResultSchema.safeParse({ score: 0.5 }).success).toBe(false);
    const parsed = CriticResultSchema.parse({ score: 0.5, message: null });
    expect(parsed).toEqual({ score: 0.5, message: null, metadata: null });
  });
});
