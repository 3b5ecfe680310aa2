/**
 * One-shot commands: `bash -c <command>` in its own process group, output collected per stream
 * (bounded), killed as a group when it runs past its timeout or the caller goes away. Unlike the
 * agent's terminal there is no shared session: each command starts from a fresh shell.
 */
import { spawn } from 'node:child_process';
import { type AgentUser, spawnAsAgent } from '../agent-user.js';
import { constants } from 'node:os';
import { OutputBuffer } from '../agent/tools/terminal/output-buffer.js';

export interface RunCommandOptions {
  command: string;
  cwd: string;
  timeoutMs: number;
  /** Most characters kept per stream; the middle of longer output is replaced by a note. */
  outputLimit: number;
  /** Aborting kills the command (the HTTP client disconnected). */
  signal?: AbortSignal;
  /** Runs the command as this user rather than the agent-server's own. */
  agentUser?: AgentUser;
}

export interface CommandOutcome {
  /** The shell's exit status; 128 + N when a signal N ended it, as shells report it. */
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Background processes a command started (`server &`) are left running, but they may hold the
 * output pipes open: once bash itself has exited we wait this long for the pipes, then stop reading.
 */
const EXIT_DRAIN_MS = 200;

export function runCommand(options: RunCommandOptions): Promise<CommandOutcome> {
  return new Promise((resolve, reject) => {
    // detached: the command leads a new process group, so a timeout can kill what it started too.
    const child = spawn('bash', ['-c', options.command], {
      ...spawnAsAgent(options.agentUser, process.env),
      cwd: options.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout = new OutputBuffer(options.outputLimit);
    const stderr = new OutputBuffer(options.outputLimit);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => stdout.append(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.append(chunk));

    let timedOut = false;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const timeoutTimer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', killGroup, { once: true });

    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeoutTimer);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener('abort', killGroup);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ exitCode: exitCodeOf(code, signal), stdout: stdout.take(), stderr: stderr.take(), timedOut });
    };

    child.once('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeoutTimer);
      options.signal?.removeEventListener('abort', killGroup);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      drainTimer = setTimeout(() => finish(code, signal), EXIT_DRAIN_MS);
    });
    child.once('close', finish);
  });
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal === null ? 0 : constants.signals[signal]);
}
