/**
 * GET /api/git/changes and /api/git/diff, as OpenHands' agent-server serves them to its "Changes"
 * tab: the files changed in a repository since a ref (HEAD by default, untracked files included),
 * and one file's content at that ref beside its current content. A path outside any repository
 * has no changes and no diff rather than an error, as there.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { GitContext } from '../../services/git/context.js';
import { registerGitChanges } from './git-changes.js';
import { registerGitDiff } from './git-diff.js';

export function registerGitRoutes(app: OpenAPIHono, ctx: GitContext): void {
  registerGitChanges(app, ctx);
  registerGitDiff(app, ctx);
}
