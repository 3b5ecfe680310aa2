import { describe, expect, it } from 'vitest';
import {
  insertLines,
  lineOf,
  numberLines,
  occurrenceLines,
  splitLines,
} from '../../../../../src/agent-server/agent/tools/file-editor/text-lines.js';

describe('splitLines', () => {
  it('counts lines as cat -n does', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a']);
    expect(splitLines('a\n')).toEqual(['a']);
    expect(splitLines('a\n\nb\n')).toEqual(['a', '', 'b']);
  });
});

describe('insertLines', () => {
  it('inserts whole lines after the given line, keeping the final newline as it was', () => {
    expect(insertLines('a\nb\n', 0, 'x')).toBe('x\na\nb\n');
    expect(insertLines('a\nb\n', 1, 'x\ny')).toBe('a\nx\ny\nb\n');
    expect(insertLines('a\nb\n', 2, 'x')).toBe('a\nb\nx\n');
    expect(insertLines('a\nb', 2, 'x')).toBe('a\nb\nx');
    expect(insertLines('', 0, 'x')).toBe('x\n');
  });
});

describe('occurrenceLines and lineOf', () => {
  it('finds each non-overlapping occurrence with its line', () => {
    expect(occurrenceLines('foo\nbar foo\nbaz\nfoo', 'foo')).toEqual([1, 2, 4]);
    expect(occurrenceLines('aaaa', 'aa')).toEqual([1, 1]);
    expect(occurrenceLines('abc', 'x')).toEqual([]);
    expect(lineOf('a\nb\nc', 4)).toBe(3);
  });
});

describe('numberLines', () => {
  const lines = ['one', 'two', 'three', 'four'];

  it('numbers a range like cat -n', () => {
    expect(numberLines(lines, 2, 3, 1000)).toEqual({ text: '     2\ttwo\n     3\tthree', lastLine: 3 });
  });

  it('stops at whole lines when the budget runs out', () => {
    const view = numberLines(lines, 1, 4, 25);
    expect(view.text).toBe('     1\tone\n     2\ttwo');
    expect(view.lastLine).toBe(2);
  });

  it('cuts a single line longer than the budget', () => {
    const view = numberLines(['x'.repeat(100)], 1, 1, 20);
    expect(view.lastLine).toBe(1);
    expect(view.text).toContain('[... rest of line 1 cut]');
    expect(view.text.length).toBeLessThan(60);
  });
});
