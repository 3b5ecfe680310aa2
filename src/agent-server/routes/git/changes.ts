import { z } from '@hono/zod-openapi';

export const GitChangeStatusSchema = z.enum(['MOVED', 'ADDED', 'DELETED', 'UPDATED']).openapi('GitChangeStatus');
export const GitChangeSchema = z.object({ path: z.string(), status: GitChangeStatusSchema }).openapi('GitChange');
export type GitChange = z.output<typeof GitChangeSchema>;

const STATUS_OF_LETTER: Record<string, GitChange['status']> = {
  A: 'ADDED',
  C: 'ADDED',
  D: 'DELETED',
  M: 'UPDATED',
  T: 'UPDATED',
  R: 'MOVED',
};

/**
 * Parses `git diff --name-status -z` (letter, then one path, or two for renames and copies, NUL
 * separated) and `git ls-files --others -z` (untracked files, which count as added).
 */
export function parseChanges(nameStatus: string, untracked: string): GitChange[] {
  const changes: GitChange[] = [];
  const fields = nameStatus.split('\0').filter((field) => field !== '');
  for (let i = 0; i < fields.length; ) {
    const letter = fields[i]!.charAt(0);
    const twoPaths = letter === 'R' || letter === 'C';
    const path = fields[twoPaths ? i + 2 : i + 1];
    i += twoPaths ? 3 : 2;
    const status = STATUS_OF_LETTER[letter];
    if (path !== undefined && status !== undefined) changes.push({ path, status });
  }
  for (const path of untracked.split('\0')) if (path !== '') changes.push({ path, status: 'ADDED' });
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}
