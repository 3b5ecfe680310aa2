/**
 * Runs one search program (rg, find, grep) as the agent user, without a shell: what it may read is
 * what the agent may read. Output is NUL- or newline-separated records, kept whole; a search that
 * outlasts its timeout is killed with its process group and reported, never waited for.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { type AgentUser, spawnAsAgent } from '../../../agent-user.js';

export interface SearchRun {
  program: string;
  args: string[];
  cwd: string;
  agentUser?: AgentUser;
  /** Written to the program's stdin, which is closed after it. */
  input?: string;
  /** Records end with NUL rather than a newline. */
  nulSeparated?: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface SearchOutput {
  exitCode: number | null;
  records: string[];
  /** The start of stderr, for the error the agent reads. */
  stderr: string;
  timedOut: boolean;
}

/** OpenHands gives a search 30 s. */
export const SEARCH_TIMEOUT_MS = 30_000;
const STDERR_LIMIT = 2_000;

export function runSearch(run: SearchRun): Promise<SearchOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(run.program, run.args, {
      ...spawnAsAgent(run.agentUser, process.env),
      cwd: run.cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const separator = run.nulSeparated ? '\0' : '\n';
    const records: string[] = [];
    let pending = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (pending + chunk).split(separator);
      pending = parts.pop() ?? '';
      for (const part of parts) if (part !== '') records.push(part);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < STDERR_LIMIT) stderr = (stderr + chunk).slice(0, STDERR_LIMIT);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(run.input ?? '');
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, run.timeoutMs);
    run.signal?.addEventListener('abort', killGroup, { once: true });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', killGroup);
      if (pending !== '') records.push(pending);
      resolve({ exitCode: code, records, stderr: stderr.trim(), timedOut });
    });
  });
}

/** Whether `program` is an executable file on PATH: ripgrep is used where the image has it. */
export function hasProgram(program: string, pathVariable = process.env.PATH ?? ''): boolean {
  return pathVariable.split(path.delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(path.join(dir, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
