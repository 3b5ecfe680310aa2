import { randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { validationError } from '../../../errors/index.js';
import { requireJsonBody } from '../json-body.js';
import { jsonContent, validationErrorResponse } from '../responses.js';
import { BashOutputSchema, ExecuteBashRequestSchema, type BashOutput } from '../../../contracts/agent-server/bash.js';
import { runCommand } from './run-command.js';

/** Characters kept per stream: a command that prints gigabytes answers with its head and tail. */
export const OUTPUT_LIMIT_CHARS = 1_000_000;
/** The exit code OpenHands reports for a command that ran past its timeout. */
export const TIMEOUT_EXIT_CODE = -1;

export const executeBashCommandRoute = createRoute({
  method: 'post',
  path: '/api/bash/execute_bash_command',
  tags: ['Bash'],
  summary: 'Run a command with bash -c and wait for it to finish',
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { 'application/json': { schema: ExecuteBashRequestSchema } } } },
  responses: {
    200: jsonContent(BashOutputSchema, 'The command finished, failed, or was killed at its timeout (exit_code -1)'),
    ...validationErrorResponse,
  },
});

export interface BashRoutesOptions {
  /** Where commands run when the request names no cwd, and what a relative cwd is resolved against. */
  workspaceDir: string;
}

export function registerExecuteBashCommand(app: OpenAPIHono, options: BashRoutesOptions): void {
  app.openapi(executeBashCommandRoute, async (c) => {
    const request = c.req.valid('json');
    const cwd = await workingDirectory(options.workspaceDir, request.cwd);
    const outcome = await runCommand({
      command: request.command,
      cwd,
      timeoutMs: request.timeout * 1000,
      outputLimit: OUTPUT_LIMIT_CHARS,
      signal: c.req.raw.signal,
    });
    const timeoutNote = `Command timed out after ${request.timeout} seconds and was killed.\n`;
    const output: BashOutput = {
      id: randomUUID(),
      timestamp: new Date().toISOString(),
      kind: 'BashOutput',
      command_id: randomUUID(),
      order: 0,
      exit_code: outcome.timedOut ? TIMEOUT_EXIT_CODE : outcome.exitCode,
      stdout: outcome.stdout,
      stderr: outcome.timedOut ? outcome.stderr + timeoutNote : outcome.stderr,
    };
    return c.json(output, 200);
  });
}

/**
 * The directory a command runs in. A cwd the caller names must exist (422 otherwise); the
 * workspace itself is created on first use, as a fresh sandbox may not have it yet.
 */
async function workingDirectory(workspaceDir: string, cwd: string | null | undefined): Promise<string> {
  if (cwd === undefined || cwd === null) {
    await mkdir(workspaceDir, { recursive: true });
    return workspaceDir;
  }
  const dir = resolve(workspaceDir, cwd);
  const found = await stat(dir).catch(() => undefined);
  if (!found?.isDirectory()) throw validationError(['body', 'cwd'], `No such directory: ${dir}`);
  return dir;
}
