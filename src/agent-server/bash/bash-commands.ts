/**
 * Commands run on request through /api/bash: each is recorded as a BashCommand, run with
 * `bash -c` (./run-command), and its result recorded as a BashOutput (exit code -1 past its
 * timeout). Both land in the BashEventLog, so they can be searched and streamed.
 */
import type { AgentUser } from '../agent-user.js';
import { randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { nowTimestamp } from '../../events/index.js';
import { validationError } from '../../errors/index.js';
import { logger } from '../../logger.js';
import type { BashCommand, BashOutput, ExecuteBashRequest } from '../../contracts/agent-server/bash.js';
import type { BashEventLog } from './bash-event-log.js';
import { runCommand } from './run-command.js';

/** Characters kept per stream: a command that prints gigabytes answers with its head and tail. */
export const OUTPUT_LIMIT_CHARS = 1_000_000;
/** The exit code OpenHands reports for a command that ran past its timeout. */
export const TIMEOUT_EXIT_CODE = -1;

export interface StartedCommand {
  command: BashCommand;
  /** Resolves once the command ended and its BashOutput is recorded. */
  output: Promise<BashOutput>;
}

export class BashCommands {
  constructor(
    private readonly events: BashEventLog,
    /** Where commands run when the request names no cwd, and what a relative cwd is resolved against. */
    private readonly workspaceDir: string,
    /** Who the commands run as; this process's user when absent. */
    private readonly agentUser?: AgentUser,
  ) {}

  /** Records the command and starts it; `signal` (a caller that went away) kills it. */
  async start(request: Required<Pick<ExecuteBashRequest, 'command' | 'timeout'>> & { cwd?: string | null }, signal?: AbortSignal): Promise<StartedCommand> {
    const cwd = await this.workingDirectory(request.cwd);
    const command: BashCommand = {
      id: randomUUID(),
      timestamp: nowTimestamp(),
      kind: 'BashCommand',
      command: request.command,
      cwd,
      timeout: request.timeout,
    };
    await this.events.append(command);
    const output = this.run(command, signal);
    output.catch((error: unknown) => logger.error({ err: error, commandId: command.id }, 'bash command: recording its output failed'));
    return { command, output };
  }

  private async run(command: BashCommand, signal?: AbortSignal): Promise<BashOutput> {
    const outcome = await runCommand({
      command: command.command,
      cwd: command.cwd ?? this.workspaceDir,
      timeoutMs: command.timeout * 1000,
      outputLimit: OUTPUT_LIMIT_CHARS,
      signal,
      agentUser: this.agentUser,
    }).catch((error: Error) => ({ exitCode: 127, stdout: '', stderr: `${error.message}\n`, timedOut: false }));
    const timeoutNote = `Command timed out after ${command.timeout} seconds and was killed.\n`;
    const output: BashOutput = {
      id: randomUUID(),
      timestamp: nowTimestamp(),
      kind: 'BashOutput',
      command_id: command.id,
      order: 0,
      exit_code: outcome.timedOut ? TIMEOUT_EXIT_CODE : outcome.exitCode,
      stdout: outcome.stdout,
      stderr: outcome.timedOut ? outcome.stderr + timeoutNote : outcome.stderr,
    };
    await this.events.append(output);
    return output;
  }

  /**
   * The directory a command runs in. A cwd the caller names must exist (422 otherwise); the
   * workspace itself is created on first use, as a fresh sandbox may not have it yet.
   */
  private async workingDirectory(cwd: string | null | undefined): Promise<string> {
    if (cwd === undefined || cwd === null) {
      await mkdir(this.workspaceDir, { recursive: true });
      return this.workspaceDir;
    }
    const dir = resolve(this.workspaceDir, cwd);
    const found = await stat(dir).catch(() => undefined);
    if (!found?.isDirectory()) throw validationError('body', ['cwd'], `No such directory: ${dir}`);
    return dir;
  }
}
