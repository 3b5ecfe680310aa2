/**
 * Runs the built sandboxctl (dist/sandboxctl.js) as a user would. CI builds before testing; on a
 * developer's machine the bundle is rebuilt first when a source is newer, under a lock so that
 * test files running in parallel do not read a bundle another one is writing.
 */
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');
export const SANDBOXCTL = join(ROOT, 'dist', 'sandboxctl.js');
const LOCK_DIR = join(ROOT, 'dist', '.sandboxctl-build.lock');
/** A lock older than this was left by a test run that died. */
const STALE_LOCK_MS = 120_000;

async function newestSourceMillis(): Promise<number> {
  const entries = await readdir(join(ROOT, 'src'), { recursive: true, withFileTypes: true });
  const files = [...entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)), join(ROOT, 'scripts', 'build.mjs')];
  const times = await Promise.all(files.map(async (file) => (await stat(file)).mtimeMs));
  return Math.max(...times);
}

async function isStale(): Promise<boolean> {
  const built = await stat(SANDBOXCTL).catch(() => undefined);
  return built === undefined || (await newestSourceMillis()) > built.mtimeMs;
}

async function takeLock(): Promise<void> {
  await mkdir(join(ROOT, 'dist'), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK_DIR);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = await stat(LOCK_DIR).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) await rm(LOCK_DIR, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

export async function ensureBuilt(): Promise<void> {
  if (!(await isStale())) return;
  await takeLock();
  try {
    if (await isStale()) await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  } finally {
    await rm(LOCK_DIR, { recursive: true, force: true });
  }
}

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
