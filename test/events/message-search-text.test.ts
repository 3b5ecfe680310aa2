import { describe, expect, it } from 'vitest';
import { EventSchema, messageSearchText } from '../../src/events/index.js';

type Searchable = Parameters<typeof messageSearchText>[0];

const cases: Array<[string, Searchable, string | null]> = [
  [
    'joins the text items of content and extended_content, lower-cased',
    {
      kind: 'MessageEvent',
      llm_message: {
        role: 'user',
        content: [
          { type: 'text', text: 'Fix the BUG' },
          { type: 'image', image_urls: ['https://x/Shot.png'] },
          { type: 'text', text: 'In main.ts' },
        ],
      },
      extended_content: [{ type: 'text', text: 'Repo: ACME' }],
    },
    'fix the bug\nin main.ts\nrepo: acme',
  ],
  ['reads text items that leave out type', { kind: 'MessageEvent', llm_message: { content: [{ text: 'Hi' }] } }, 'hi'],
  ['is empty for a message without text', { kind: 'MessageEvent', llm_message: { role: 'user', content: [] } }, ''],
  ['is null for any other kind', { kind: 'ActionEvent', thought: [{ type: 'text', text: 'hello' }] }, null],
  ['ignores a missing llm_message', { kind: 'MessageEvent' }, ''],
  ['ignores a non-object llm_message', { kind: 'MessageEvent', llm_message: 'text' }, ''],
  ['ignores non-array content', { kind: 'MessageEvent', llm_message: { content: 'hello' }, extended_content: 7 }, ''],
  [
    'ignores odd items',
    {
      kind: 'MessageEvent',
      llm_message: { content: [null, 3, 'x', { type: 'text', text: 5 }, { type: 'thinking', text: 'no' }] },
      extended_content: [{ text: 'Yes' }],
    },
    'yes',
  ],
];

describe('messageSearchText', () => {
  it.each(cases)('%s', (_name, event, expected) => {
    expect(messageSearchText(event)).toBe(expected);
  });

  it('reads a parsed MessageEvent', () => {
    const event = EventSchema.parse({
      kind: 'MessageEvent',
      source: 'agent',
      llm_message: { role: 'assistant', content: [{ text: 'Done: ÄÖ' }] },
    });
    expect(messageSearchText(event)).toBe('done: äö');
  });
});
