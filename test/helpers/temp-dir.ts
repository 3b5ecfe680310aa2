import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new empty directory under the OS temp dir, unique to the caller. */
export function makeTempDir(prefix = 'sandbox-server-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/**
 * Removes `dir` and all it holds. A process a test ended (a terminal's shell, a tool's child) may
 * still write its last file for a moment after it was told to stop, so a directory found not empty
 * mid-removal (ENOTEMPTY) is tried again, as rm's retries do for it.
 */
export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
