import { realpath } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { createAgentFs } from '../../agent-fs/index.js';
import type { GitContext } from './context.js';
import { baseRef, git, repositoryRoot } from './git-command.js';

export interface GitDiff {
  modified: string | null;
  original: string | null;
}

/**
 * A file's content at `ref` (original) beside its content now (modified), null where it does not
 * exist; both null outside any repository. The current content is read with the agent's rights:
 * the file may be a link the agent planted.
 */
export async function getGitDiff(ctx: GitContext, input: { path: string; ref?: string }): Promise<GitDiff> {
  const file = resolve(ctx.workspaceDir, input.path);
  const user = ctx.agentUser;
  const root = await repositoryRoot(user, dirname(file));
  if (root === undefined) return { modified: null, original: null };
  const ref = await baseRef(user, root, input.ref);
  // git names the root by its real path; a workspace reached through a symlink must match it.
  const dir = await realpath(dirname(file)).catch(() => dirname(file));
  const original = await git(user, root, ['show', `${ref}:${relative(root, join(dir, basename(file)))}`]);
  const modified = await createAgentFs({ user }).readFile(file).then((bytes) => bytes.toString('utf8'), () => null);
  return { modified, original: original.ok ? original.stdout : null };
}
