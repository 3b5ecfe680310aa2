import { describe, expect, it } from 'vitest';
import { OutputBuffer } from '../../../../../src/agent-server/agent/tools/terminal/output-buffer.js';

describe('OutputBuffer', () => {
  it('returns everything while within the limit, then starts empty', () => {
    const buffer = new OutputBuffer(10);
    buffer.append('abc');
    buffer.append('defghij');
    expect(buffer.take()).toBe('abcdefghij');
    expect(buffer.take()).toBe('');
  });

  it('keeps the head and the tail of longer output and says how much it cut', () => {
    const buffer = new OutputBuffer(10);
    for (const chunk of ['01234', '56789', 'abcde', 'fghij']) buffer.append(chunk);
    const text = buffer.take();
    expect(text.startsWith('01234\n')).toBe(true);
    expect(text.endsWith('\nfghij')).toBe(true);
    expect(text).toContain('10 characters of output omitted');
  });

  it('cuts one long chunk the same way', () => {
    const buffer = new OutputBuffer(4);
    buffer.append('a'.repeat(100) + 'zz');
    const text = buffer.take();
    expect(text.startsWith('aa\n')).toBe(true);
    expect(text.endsWith('\nzz')).toBe(true);
    expect(text).toContain('98 characters of output omitted');
  });

  it('forgets everything on clear', () => {
    const buffer = new OutputBuffer(4);
    buffer.append('0123456789');
    buffer.clear();
    buffer.append('ok');
    expect(buffer.take()).toBe('ok');
  });
});
