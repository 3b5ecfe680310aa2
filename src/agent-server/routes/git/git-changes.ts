import { resolve } from 'node:path';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { validationError } from '../../../errors/index.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { GitChangeSchema, parseChanges } from './changes.js';
import { baseRef, git, repositoryRoot } from './git-command.js';
import { GitQuerySchema, type GitRoutesOptions } from './git-query.js';

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

export function registerGitChanges(app: OpenAPIHono, options: GitRoutesOptions): void {
  app.openapi(gitChangesRoute, async (c) => {
    const query = c.req.valid('query');
    const user = options.agentUser;
    const root = await repositoryRoot(user, resolve(options.workspaceDir, query.path));
    if (root === undefined) return c.json([], 200);
    const ref = await baseRef(user, root, query.ref);
    const [tracked, untracked] = await Promise.all([
      git(user, root, ['diff', '--name-status', '-z', '-M', ref, '--']),
      git(user, root, ['ls-files', '--others', '--exclude-standard', '-z']),
    ]);
    if (!tracked.ok) throw validationError('query', ['ref'], `git cannot compare with ${ref}: ${tracked.stderr.trim()}`);
    return c.json(parseChanges(tracked.stdout, untracked.ok ? untracked.stdout : ''), 200);
  });
}
