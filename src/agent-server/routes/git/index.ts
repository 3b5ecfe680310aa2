/**
 * GET /api/git/changes and /api/git/diff, as OpenHands' agent-server serves them to its "Changes"
 * tab: the files changed in a repository since a ref (HEAD by default, untracked files included),
 * and one file's content at that ref beside its current content. A path outside any repository
 * has no changes and no diff rather than an error, as there.
 */
import { readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { validationError } from '../../../errors/index.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { GitChangeSchema, parseChanges } from './changes.js';
import { baseRef, git, repositoryRoot } from './git-command.js';

const GitQuerySchema = z.object({
  path: z.string().min(1).openapi({ description: 'A directory in the repository (changes) or a file (diff); relative to the workspace' }),
  ref: z
    .string()
    .min(1)
    .regex(/^[^-]/, 'must not start with "-"')
    .optional()
    .openapi({ description: 'What to compare with; HEAD by default (the empty tree before the first commit)' }),
});

const GitDiffSchema = z.object({ modified: z.string().nullable(), original: z.string().nullable() }).openapi('GitDiff');

const gitChangesRoute = createRoute({
  method: 'get',
  path: '/api/git/changes',
  tags: ['Git'],
  summary: 'Files changed in the repository since a ref, untracked ones included',
  request: { query: GitQuerySchema },
  responses: {
    200: jsonContent(z.array(GitChangeSchema), 'Changes, by path'),
    ...validationErrorResponse,
    503: jsonContent(DetailSchema, 'git is not installed'),
  },
});

const gitDiffRoute = createRoute({
  method: 'get',
  path: '/api/git/diff',
  tags: ['Git'],
  summary: "A file's content at a ref (original) and now (modified); null where it does not exist",
  request: { query: GitQuerySchema },
  responses: {
    200: jsonContent(GitDiffSchema, 'Both versions'),
    ...validationErrorResponse,
    503: jsonContent(DetailSchema, 'git is not installed'),
  },
});

export interface GitRoutesOptions {
  /** What relative paths are resolved against. */
  workspaceDir: string;
}

export function registerGitRoutes(app: OpenAPIHono, options: GitRoutesOptions): void {
  app.openapi(gitChangesRoute, async (c) => {
    const query = c.req.valid('query');
    const root = await repositoryRoot(resolve(options.workspaceDir, query.path));
    if (root === undefined) return c.json([], 200);
    const ref = await baseRef(root, query.ref);
    const [tracked, untracked] = await Promise.all([
      git(root, ['diff', '--name-status', '-z', '-M', ref, '--']),
      git(root, ['ls-files', '--others', '--exclude-standard', '-z']),
    ]);
    if (!tracked.ok) throw validationError(['query', 'ref'], `git cannot compare with ${ref}: ${tracked.stderr.trim()}`);
    return c.json(parseChanges(tracked.stdout, untracked.ok ? untracked.stdout : ''), 200);
  });

  app.openapi(gitDiffRoute, async (c) => {
    const query = c.req.valid('query');
    const file = resolve(options.workspaceDir, query.path);
    const root = await repositoryRoot(dirname(file));
    if (root === undefined) return c.json({ modified: null, original: null }, 200);
    const ref = await baseRef(root, query.ref);
    // git names the root by its real path; a workspace reached through a symlink must match it.
    const dir = await realpath(dirname(file)).catch(() => dirname(file));
    const original = await git(root, ['show', `${ref}:${relative(root, join(dir, basename(file)))}`]);
    const modified = await readFile(file, 'utf8').catch(() => null);
    return c.json({ modified, original: original.ok ? original.stdout : null }, 200);
  });
}
