/** Runs the built sandboxctl (dist/sandboxctl.js) as a user would (see ensureBuilt). */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

const ROOT = join(import.meta.dirname, '..', '..');
export const SANDBOXCTL = join(ROOT, 'dist', 'sandboxctl.js');
export { ensureBuilt } from '../helpers/build.js';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** The environment of a run: the test's own minus any sandboxctl settings, plus `env`. */
function runEnvironment(env: RunOptions['env'] = {}): NodeJS.ProcessEnv {
  const { SANDBOX_SERVER_URL: _url, SANDBOX_SERVER_API_KEY: _key, ...inherited } = process.env;
  return { ...inherited, ...env };
}

/** Runs sandboxctl to the end (asynchronously: the server under test runs in this process). */
export function runSandboxctl(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnSandboxctl(args, options);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts sandboxctl and hands over the running process (for --follow). */
export function spawnSandboxctl(args: readonly string[], options: RunOptions = {}): ChildProcessByStdio<null, Readable, Readable> {
  const child = spawn(process.execPath, [SANDBOXCTL, ...args], {
    cwd: options.cwd,
    env: runEnvironment(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  return child;
}

/**
 * Runs sandboxctl with a terminal for its stdout and stderr, through util-linux `script` (always
 * on Debian): what a person at a terminal would see, both streams in one.
 */
export function runSandboxctlInTerminal(args: readonly string[], options: RunOptions = {}): Promise<{ code: number | null; output: string }> {
  const commandLine = [process.execPath, SANDBOXCTL, ...args].map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['--quiet', '--return', '--command', commandLine, '/dev/null'], {
      cwd: options.cwd,
      env: runEnvironment(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
