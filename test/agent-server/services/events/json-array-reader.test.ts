import { describe, expect, it } from 'vitest';
import { JsonArrayReader } from '../../../../src/agent-server/services/events/json-array-reader.js';

/** What the reader reports for `pieces` fed in order, then the end of the body. */
function read(pieces: string[]): { elements: { text: string; index: number; depth: number }[]; invalid: { msg: string; type: string }[] } {
  const elements: { text: string; index: number; depth: number }[] = [];
  const invalid: { msg: string; type: string }[] = [];
  const reader = new JsonArrayReader({
    onElement: (text, index, depth) => elements.push({ text: text.trim(), index, depth }),
    onInvalid: (msg, type) => invalid.push({ msg, type }),
  });
  for (const piece of pieces) reader.push(piece);
  reader.end();
  return { elements, invalid };
}

/** Every way of cutting `text` into two pieces, and one piece per character. */
function cuts(text: string): string[][] {
  const ways = [[text], [...text]];
  for (let at = 1; at < text.length; at++) ways.push([text.slice(0, at), text.slice(at)]);
  return ways;
}

describe('JsonArrayReader', () => {
  it('hands over each element of an array however the text is cut, with strings holding brackets, commas and escaped quotes', () => {
    const text = ' [ {"a": "x,]}\\"[", "b": [1, {"c": 2}]} , 7, "s\\\\", null,[] ] \n';
    for (const pieces of cuts(text)) {
      expect(read(pieces)).toEqual({
        elements: [
          { text: '{"a": "x,]}\\"[", "b": [1, {"c": 2}]}', index: 0, depth: 3 },
          { text: '7', index: 1, depth: 0 },
          { text: '"s\\\\"', index: 2, depth: 0 },
          { text: 'null', index: 3, depth: 0 },
          { text: '[]', index: 4, depth: 1 },
        ],
        invalid: [],
      });
    }
    expect(JSON.parse(read([text]).elements[0]?.text ?? '')).toEqual({ a: 'x,]}"[', b: [1, { c: 2 }] });
  });

  it('reads an empty array as no elements', () => {
    expect(read(['[', ' ]'])).toEqual({ elements: [], invalid: [] });
  });

  it('reports a break in the array itself once, and reads nothing after it', () => {
    const invalid = (msg: RegExp) => [{ msg: expect.stringMatching(msg), type: 'json_invalid' }];
    expect(read(['[{"kind": ']).invalid).toEqual(invalid(/^Invalid JSON: the body ends before the array is closed/));
    expect(read(['[1, 2']).invalid).toEqual(invalid(/^Invalid JSON: the body ends/));
    expect(read(['[1,,2]'])).toEqual({ elements: [{ text: '1', index: 0, depth: 0 }], invalid: invalid(/^Invalid JSON: a value is missing/) });
    expect(read(['[1,]']).invalid).toEqual(invalid(/^Invalid JSON: a value is missing/));
    expect(read(['[1] [2]'])).toEqual({ elements: [{ text: '1', index: 0, depth: 0 }], invalid: invalid(/^Invalid JSON: unexpected data after the array/) });
    expect(read(['{"a": 1}']).invalid).toEqual([{ msg: 'Input should be a valid list', type: 'list_type' }]);
    expect(read(['  ']).invalid).toEqual([{ msg: 'Input should be a valid list', type: 'list_type' }]);
  });

  it('counts the depth of each element without parsing it', () => {
    const deep = `${'['.repeat(500)}${']'.repeat(500)}`;
    expect(read([`[{"a": 1}, ${deep.slice(0, 300)}`, `${deep.slice(300)}]`]).elements.map((e) => e.depth)).toEqual([1, 500]);
  });
});
