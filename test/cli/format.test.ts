import { describe, expect, it } from 'vitest';
import { SandboxServerError, SandboxServerUnreachableError, type ConversationEvent } from '../../src/client/index.js';
import { CliError, UsageError } from '../../src/cli/cli-error.js';
import { parseLocation } from '../../src/cli/commands/cp.js';
import { describeError } from '../../src/cli/describe-error.js';
import { formatEventLine } from '../../src/cli/event-line.js';
import { formatElapsed, formatFields, formatTable, formatTime, oneLine } from '../../src/cli/format.js';
import { Progress } from '../../src/cli/progress.js';

describe('formatTable', () => {
  it('aligns columns on their widest cell, two spaces apart, without trailing spaces', () => {
    expect(formatTable(['ID', 'STATUS', 'URL'], [['a', 'RUNNING', 'http://x'], ['longer-id', 'PAUSED', '']])).toBe(
      ['ID         STATUS   URL', 'a          RUNNING  http://x', 'longer-id  PAUSED'].join('\n'),
    );
  });

  it('prints the header alone for no rows', () => {
    expect(formatTable(['ID', 'STATUS'], [])).toBe('ID  STATUS');
  });
});

describe('text helpers', () => {
  it('aligns label/value lines', () => {
    expect(formatFields([['id', 'x'], ['status', 'RUNNING']])).toBe('id      x\nstatus  RUNNING');
  });

  it('shows times in UTC to the second, and zone-less ones as written', () => {
    expect(formatTime('2026-11-23T13:42:48.123+02:00')).toBe('2026-11-23 11:42:48');
    expect(formatTime('2024-05-01T10:00:00.000000')).toBe('2024-05-01 10:00:00');
    expect(formatTime('not a date')).toBe('not a date');
    expect(formatTime(null)).toBe('');
  });

  it('formats elapsed time and cuts long text to one line', () => {
    expect([formatElapsed(999), formatElapsed(42_000), formatElapsed(187_000)]).toEqual(['0s', '42s', '3m07s']);
    expect(oneLine('a\n  b\tc', 10)).toBe('a b c');
    expect(oneLine('abcdefghijkl', 5)).toBe('abcd…');
  });
});

describe('formatEventLine', () => {
  const base = { id: 'e1', timestamp: '2026-01-02T03:04:05Z' };
  const line = (event: Record<string, unknown>) => formatEventLine({ ...base, ...event } as unknown as ConversationEvent);

  it('shows time, source, kind and the text of a message', () => {
    expect(
      line({ kind: 'MessageEvent', source: 'user', llm_message: { role: 'user', content: [{ type: 'text', text: 'Fix\nthe test' }] }, extended_content: [] }),
    ).toBe('2026-01-02 03:04:05  user         MessageEvent              Fix the test');
  });

  it('says what an action, an observation and errors are about', () => {
    const action = line({ kind: 'ActionEvent', source: 'agent', tool_name: 'terminal', summary: null, action: { kind: 'TerminalAction', command: 'ls -la' } });
    expect(action).toMatch(/ActionEvent +terminal: ls -la$/);
    const observation = line({
      kind: 'ObservationEvent',
      source: 'environment',
      tool_name: 'terminal',
      observation: { kind: 'TerminalObservation', exit_code: 2, content: [{ type: 'text', text: 'No such file' }] },
    });
    expect(observation).toMatch(/ObservationEvent +terminal: exit 2: No such file$/);
    expect(line({ kind: 'ConversationErrorEvent', source: 'environment', code: 'LLMError', detail: 'down' })).toMatch(/LLMError: down$/);
    expect(line({ kind: 'ConversationStateUpdateEvent', source: 'environment', key: 'execution_status', value: 'running' })).toMatch(
      /ConversationStateUpdateEvent  execution_status = "running"$/,
    );
    expect(line({ kind: 'PauseEvent', source: 'user' })).toBe('2026-01-02 03:04:05  user         PauseEvent');
  });

  it('keeps a long text to one short line', () => {
    const text = line({ kind: 'AgentErrorEvent', source: 'agent', tool_name: 't', error: 'x'.repeat(500) });
    expect(text.length).toBeLessThan(200);
    expect(text.endsWith('…')).toBe(true);
  });
});

describe('Progress', () => {
  function stream(isTTY: boolean) {
    const chunks: string[] = [];
    return { chunks, isTTY, write: (chunk: string | Uint8Array) => chunks.push(String(chunk)) > 0 };
  }

  it('rewrites one line in place on a terminal, with the elapsed time', () => {
    let now = 0;
    const tty = stream(true);
    const progress = new Progress(tty, () => now);
    progress.update('sandbox a: STARTING');
    now = 2_000;
    progress.update('sandbox a: STARTING');
    progress.finish('sandbox a is RUNNING');
    expect(tty.chunks.join('')).toBe(
      '\r\x1b[2Ksandbox a: STARTING (0s)\r\x1b[2Ksandbox a: STARTING (2s)\r\x1b[2Ksandbox a is RUNNING (2s)\n',
    );
  });

  it('writes a plain line per change of status otherwise', () => {
    const plain = stream(false);
    const progress = new Progress(plain, () => 0);
    progress.update('sandbox a: STARTING');
    progress.update('sandbox a: STARTING');
    progress.update('sandbox a: RUNNING');
    progress.finish('sandbox a is RUNNING');
    expect(plain.chunks).toEqual(['sandbox a: STARTING\n', 'sandbox a: RUNNING\n', 'sandbox a is RUNNING (0s)\n']);
  });
});

describe('parseLocation', () => {
  it('reads <sandbox>:<absolute path> as a sandbox file and anything else as local', () => {
    expect(parseLocation('sb_1-x:/workspace/a.txt')).toEqual({ sandboxId: 'sb_1-x', path: '/workspace/a.txt' });
    expect(parseLocation('./a:b')).toEqual({ local: './a:b' });
    expect(parseLocation('/tmp/file')).toEqual({ local: '/tmp/file' });
    expect(() => parseLocation('sb1:workspace')).toThrow(UsageError);
  });
});

describe('describeError', () => {
  const context = { url: 'http://127.0.0.1:3000', apiKeyGiven: false };

  it('maps each failure to one line and its exit code', () => {
    expect(describeError(new UsageError('bad flag'), context)).toEqual({ message: 'bad flag', exitCode: 2 });
    expect(describeError(new CliError('no sandbox'), context)).toEqual({ message: 'no sandbox', exitCode: 1 });
    expect(describeError(new SandboxServerUnreachableError(context.url, { cause: new Error('ECONNREFUSED') }), context).message).toBe(
      'cannot reach sandbox-server at http://127.0.0.1:3000: is it running? set --url or SANDBOX_SERVER_URL',
    );
    expect(describeError(new SandboxServerError(401, 'Not authenticated', 'GET', '/x'), context).message).toBe(
      'sandbox-server at http://127.0.0.1:3000 needs an API key: set --api-key or SANDBOX_SERVER_API_KEY',
    );
    expect(describeError(new SandboxServerError(401, 'Invalid API key', 'GET', '/x'), { ...context, apiKeyGiven: true }).message).toBe(
      'sandbox-server at http://127.0.0.1:3000 rejected the API key: check --api-key or SANDBOX_SERVER_API_KEY',
    );
    const invalid = new SandboxServerError(422, [{ loc: ['body', 'image'], msg: 'Field required', type: 'missing' }], 'POST', '/x');
    expect(describeError(invalid, context)).toEqual({ message: 'invalid request: image: Field required', exitCode: 1 });
    expect(describeError(new SandboxServerError(409, 'Sandbox spec is used by 1 sandbox', 'DELETE', '/x'), context).message).toBe(
      'Sandbox spec is used by 1 sandbox (HTTP 409)',
    );
  });
});
