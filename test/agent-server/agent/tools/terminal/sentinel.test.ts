import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  commandLine,
  createMarker,
  scanForSentinel,
  shellQuote,
  shellSetupLine,
} from '../../../../../src/agent-server/agent/tools/terminal/sentinel.js';

const MARKER = '__OH_0123456789abcdef';

describe('scanForSentinel', () => {
  it('splits output from a complete sentinel and keeps what follows', () => {
    const scan = scanForSentinel(`hello\nworld\n\n${MARKER} 3 1 -1 /tmp/a dir\nnext`, MARKER);
    expect(scan.output).toBe('hello\nworld\n');
    expect(scan.sentinel).toEqual({ seq: 3, exitCode: 1, backgroundPid: -1, workingDir: '/tmp/a dir' });
    expect(scan.rest).toBe('next');
  });

  it('waits for the rest of a sentinel line that arrived in part', () => {
    const scan = scanForSentinel(`out\n${MARKER} 3 0`, MARKER);
    expect(scan).toEqual({ output: 'out', sentinel: null, rest: `\n${MARKER} 3 0` });
  });

  it('holds back only an end that could start a sentinel', () => {
    expect(scanForSentinel('plain output\n', MARKER)).toEqual({ output: 'plain output', sentinel: null, rest: '\n' });
    expect(scanForSentinel('abc\n__OH_01', MARKER)).toEqual({ output: 'abc', sentinel: null, rest: '\n__OH_01' });
    expect(scanForSentinel('no newline at the end', MARKER).output).toBe('no newline at the end');
  });

  it('treats a marker with malformed fields as output', () => {
    const scan = scanForSentinel(`x\n${MARKER} not numbers\nmore`, MARKER);
    expect(scan.sentinel).toBeNull();
    expect(scan.output).toBe(`x\n${MARKER} not numbers`);
  });

  it('does not take another marker for ours', () => {
    const scan = scanForSentinel('\n__OH_ffffffffffffffff 1 0 -1 /\n', MARKER);
    expect(scan.sentinel).toBeNull();
  });
});

describe('the shell side', () => {
  it('makes a fresh marker each time', () => {
    expect(createMarker()).toMatch(/^__OH_[0-9a-f]{16}$/);
    expect(createMarker()).not.toBe(createMarker());
  });

  it('never sends the marker whole, so shell echoes cannot fake a sentinel', () => {
    const marker = createMarker();
    expect(shellSetupLine(marker, { columns: 80, rows: 24 })).not.toContain(marker);
    expect(commandLine(1, 'echo hi')).not.toContain(marker);
  });

  it('quotes any text so that bash reads it back unchanged', () => {
    const text = `it's "quoted" $HOME \`x\` \\ \n second line`;
    const echoed = execFileSync('bash', ['-c', `printf %s ${shellQuote(text)}`], { encoding: 'utf8' });
    expect(echoed).toBe(text);
  });
});
