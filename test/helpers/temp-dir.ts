import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new empty directory under the OS temp dir, unique to the caller. */
export function makeTempDir(prefix = 'sandbox-server-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}
