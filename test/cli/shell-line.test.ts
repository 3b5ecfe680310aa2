import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellLineFor } from '../../src/cli/shell-line.js';

describe('shellLineFor', () => {
  it('gives bash back the same argv, whatever the words hold', () => {
    const words = ["it's", "''", '$HOME', '', ' a  b ', '"q"', '\\', '*', '`id`', '$(id)', '!x', 'line\nbreak', 'ünï', '-n'];
    const line = shellLineFor(['printf', '[%s]\\n', ...words]);
    expect(execFileSync('bash', ['-c', line], { encoding: 'utf8' })).toBe(words.map((word) => `[${word}]\n`).join(''));
  });
});
