/**
 * Keeps dist/ in step with src/ for tests that run the built programs. CI builds before testing; on
 * a developer's machine the bundle is rebuilt first when a source is newer, under a lock so that
 * test files running in parallel do not read a bundle another one is writing.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');
/** Every program is built at once; this one stands for all of them. */
const BUNDLE = join(ROOT, 'dist', 'sandboxctl.js');
const LOCK_DIR = join(ROOT, 'dist', '.build.lock');
/** A lock older than this was left by a test run that died. */
const STALE_LOCK_MS = 120_000;

async function newestSourceMillis(): Promise<number> {
  const entries = await readdir(join(ROOT, 'src'), { recursive: true, withFileTypes: true });
  const files = [...entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)), join(ROOT, 'scripts', 'build.mjs')];
  const times = await Promise.all(files.map(async (file) => (await stat(file)).mtimeMs));
  return Math.max(...times);
}

async function isStale(): Promise<boolean> {
  const built = await stat(BUNDLE).catch(() => undefined);
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

