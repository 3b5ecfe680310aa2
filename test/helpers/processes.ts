/**
 * Ports and the built control plane as a child process, for the tests and the benches alike: the
 * benches (bench/fleet.ts) import this file too, so it imports nothing of vitest, which they do not
 * run under, and waits by polling.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const ROOT = join(import.meta.dirname, '..', '..');
const POLL_MS = 100;

/** A port nothing listens on now: taken from the OS, then released; whoever binds it does so a moment later. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * The built control plane (dist/sandbox-server.js) as its own process on `port`, `env` laid over
 * this process's environment, once it answers /alive. Throws, rather than waiting out `timeoutMs`,
 * when the process exits first; one that does not answer in time is killed before the throw.
 * `onStdout` gets what it writes to stdout (its log lines), which is otherwise dropped.
 */
export async function startBuiltControlPlane(
  port: number,
  env: Record<string, string>,
  timeoutMs: number,
  onStdout?: (text: string) => void,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'sandbox-server.js')], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'inherit'],
  });
  if (onStdout) child.stdout?.on('data', (chunk: Buffer) => onStdout(chunk.toString('utf8')));
  const deadline = Date.now() + timeoutMs;
  while (!(await answersAlive(port))) {
    if (hasExited(child)) throw new Error(`the control plane on port ${port} exited (${child.exitCode ?? child.signalCode}) before answering /alive`);
    if (Date.now() > deadline) {
      await stopProcess(child, 'SIGKILL');
      throw new Error(`the control plane on port ${port} did not answer /alive within ${timeoutMs} ms`);
    }
    await delay(POLL_MS);
  }
  return child;
}

/** Signals the process, if it still runs, and resolves once it has exited. */
export function stopProcess(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function answersAlive(port: number): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/alive`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
  await response?.body?.cancel();
  return response?.status === 200;
}

/**
 * Runs the built control plane (a command such as `resources ls`, or the server itself) to its end,
 * `env` over this process's; one still running after `timeoutMs` is SIGKILLed (its code is then null).
 */
export function runBuiltControlPlane(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'sandbox-server.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', () => clearTimeout(timer));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
