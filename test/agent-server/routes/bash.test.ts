import { mkdir, readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import { BashCommands } from '../../../src/agent-server/bash/bash-commands.js';
import { BashEventLog } from '../../../src/agent-server/bash/bash-event-log.js';
import { BashOutputSchema, OUTPUT_LIMIT_CHARS, registerBashRoutes } from '../../../src/agent-server/routes/bash/index.js';
import { createApiApp } from '../../../src/http/app.js';
import { readAnswer, ValidationErrorSchema } from '../../helpers/answer.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

let workspaceDir: string;
const app = createApiApp();

beforeAll(async () => {
  workspaceDir = join(await makeTempDir(), 'workspace');
  const events = await BashEventLog.open(join(workspaceDir, '..', 'bash_events.ndjson'));
  registerBashRoutes(app, { commands: new BashCommands(events, workspaceDir), events });
});
afterAll(() => removeDir(join(workspaceDir, '..')));

async function execute<S extends z.ZodType = z.ZodUnknown>(body: unknown, contentType = 'application/json', schema?: S) {
  const response = await app.request('/api/bash/execute_bash_command', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readAnswer(response, schema);
}

/** execute(), answered a BashOutput. */
function output(body: unknown) {
  return execute(body, 'application/json', BashOutputSchema);
}

/** Running or sleeping: neither gone nor a zombie waiting for init to reap it. */
async function isAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && !/^\d+ \(.*\) [ZX]/.test(stat);
}

/** A SIGKILLed process takes a moment to die; ask a bounded number of times. */
async function diesSoon(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (!(await isAlive(pid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

describe('POST /api/bash/execute_bash_command', () => {
  it('answers a BashOutput with stdout and stderr apart and the exit code', async () => {
    const { status, body } = await output({ command: 'echo out; echo err >&2; exit 3' });
    expect(status).toBe(200);
    expect(BashOutputSchema.parse(body)).toEqual(body);
    expect(body).toMatchObject({ kind: 'BashOutput', order: 0, exit_code: 3, stdout: 'out\n', stderr: 'err\n' });
    expect(body.command_id).toEqual(expect.any(String));
  });

  it('runs in the workspace (created on first use), or in cwd resolved against it', async () => {
    expect((await output({ command: 'pwd' })).body.stdout).toBe(`${workspaceDir}\n`);
    await mkdir(join(workspaceDir, 'sub'));
    expect((await output({ command: 'pwd', cwd: 'sub' })).body.stdout).toBe(`${join(workspaceDir, 'sub')}\n`);
    expect((await output({ command: 'pwd', cwd: '/' })).body.stdout).toBe('/\n');
  });

  it('does not pass the session key settings of the agent-server to the command', async () => {
    vi.stubEnv('OH_SESSION_API_KEYS_0', 'key-zero');
    vi.stubEnv('SESSION_API_KEY', 'key-plain');
    vi.stubEnv('SESSION_API_KEY_SHA256', 'f'.repeat(64));
    vi.stubEnv('KEEP_ME', 'kept');
    try {
      const { body } = await output({ command: 'env' });
      expect(body.stdout).toContain('KEEP_ME=kept');
      expect(body.stdout).not.toMatch(/SESSION_API_KEY|key-zero|key-plain|ffff/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('gives each command a fresh shell: nothing carries over', async () => {
    await execute({ command: 'cd /; export CARRIED=yes' });
    expect((await output({ command: 'echo "$PWD ${CARRIED:-no}"' })).body.stdout).toBe(`${workspaceDir} no\n`);
  });

  it('reports a command ended by a signal as 128 + the signal number', async () => {
    expect((await output({ command: 'kill -TERM $$' })).body.exit_code).toBe(143);
  });

  it('kills the command and what it started at the timeout, with exit code -1', async () => {
    const pidFile = join(workspaceDir, 'child.pid');
    const { status, body } = await output({ command: `sleep 60 & echo $! > ${pidFile}; echo started; wait`, timeout: 1 });
    expect(status).toBe(200);
    expect(body.exit_code).toBe(-1);
    expect(body.stdout).toBe('started\n');
    expect(body.stderr).toContain('timed out after 1 seconds');
    const childPid = Number(await readFile(pidFile, 'utf8'));
    expect(await diesSoon(childPid)).toBe(true);
  });

  it('kills the command when the caller goes away', async () => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    const pidFile = join(workspaceDir, 'abandoned.pid');
    const caller = new AbortController();
    try {
      const request = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/bash/execute_bash_command`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command: `echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; sleep 60` }),
        signal: caller.signal,
      });
      const pid = await vi.waitFor(async () => Number(await readFile(pidFile, 'utf8')), { timeout: 10_000 });
      caller.abort();
      await expect(request).rejects.toThrow();
      expect(await diesSoon(pid)).toBe(true);
    } finally {
      (server as Server).closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers once the command exits even when a background process holds its output open', async () => {
    const { body } = await output({ command: 'sleep 60 & echo $!' });
    expect(body.exit_code).toBe(0);
    const pid = Number(body.stdout);
    expect(await isAlive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
  });

  it('keeps the head and tail of output past the limit', async () => {
    const { body } = await output({ command: `head -c ${OUTPUT_LIMIT_CHARS + 5000} /dev/zero | tr '\\0' a; echo END` });
    expect(body.exit_code).toBe(0);
    const stdout = body.stdout ?? '';
    expect(stdout.length).toBeLessThan(OUTPUT_LIMIT_CHARS + 500);
    // Compared piecewise: a failing match on a megabyte string would flood the report.
    expect(stdout.startsWith('a'.repeat(OUTPUT_LIMIT_CHARS / 2))).toBe(true);
    expect(/\n\[\.\.\. (\d+) characters of output omitted here\./.exec(stdout)?.[1]).toBe('5004');
    expect(stdout.endsWith('aaaaEND\n')).toBe(true);
  });

  it('rejects bad requests with 422 HTTPValidationError', async () => {
    expect(await execute({})).toEqual({ status: 422, body: { detail: [{ loc: ['body', 'command'], msg: 'Field required', type: 'missing' }] } });
    expect((await execute({ command: 'true', timeout: 0 }, 'application/json', ValidationErrorSchema)).body.detail[0]?.loc).toEqual(['body', 'timeout']);
    expect(await execute({ command: 'true', cwd: '/no/such/dir' })).toEqual({
      status: 422,
      body: { detail: [{ loc: ['body', 'cwd'], msg: 'No such directory: /no/such/dir', type: 'value_error' }] },
    });
    expect((await execute('command=true', 'application/x-www-form-urlencoded', ValidationErrorSchema)).body.detail[0]?.loc).toEqual(['body']);
  });
});
