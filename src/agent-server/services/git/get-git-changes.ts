import { resolve } from 'node:path';
import { validationError } from '../../../errors/index.js';
import type { GitContext } from './context.js';
import { baseRef, git, repositoryRoot } from './git-command.js';

export const GIT_CHANGE_STATUSES = ['MOVED', 'ADDED', 'DELETED', 'UPDATED'] as const;

export interface GitChange {
  path: string;
  status: (typeof GIT_CHANGE_STATUSES)[number];
}

/**
 * The files changed in the repository holding `path` since `ref` (HEAD by default), untracked ones
 * included, by path; none outside any repository. A ref git cannot compare with is a 422.
 */
export async function getGitChanges(ctx: GitContext, input: { path: string; ref?: string }): Promise<GitChange[]> {
  const user = ctx.agentUser;
  const root = await repositoryRoot(user, resolve(ctx.workspaceDir, input.path));
  if (root === undefined) return [];
  const ref = await baseRef(user, root, input.ref);
  const [tracked, untracked] = await Promise.all([
    git(user, root, ['diff', '--name-status', '-z', '-M', ref, '--']),
    git(user, root, ['ls-files', '--others', '--exclude-standard', '-z']),
  ]);
  if (!tracked.ok) throw validationError('query', ['ref'], `git cannot compare with ${ref}: ${tracked.stderr.trim()}`);
  return parseChanges(tracked.stdout, untracked.ok ? untracked.stdout : '');
}

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
function parseChanges(nameStatus: string, untracked: string): GitChange[] {
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
