import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const OWNER_FILE = 'owner';

/**
 * Records `owner` as the owner of the data directory, and answers whether the data there was
 * written under another owner: a copy (a fork, a start from a snapshot) rather than this owner's
 * own data after a restart. Without an owner (a standalone server) nothing is recorded and nothing
 * is a copy; a directory with no owner recorded yet (new, or written by a release before owners)
 * is taken as this owner's.
 */
export async function takeDataDir(dataDir: string, owner: string | undefined): Promise<{ copied: boolean }> {
  if (owner === undefined) return { copied: false };
  const file = join(dataDir, OWNER_FILE);
  const recorded = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (recorded?.trim() === owner) return { copied: false };
  // Replaced whole: a crash leaves the old owner or the new one, never a torn name.
  await writeFile(`${file}.tmp`, `${owner}\n`);
  await rename(`${file}.tmp`, file);
  return { copied: recorded !== undefined };
}
