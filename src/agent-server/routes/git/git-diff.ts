import { realpath } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { createAgentFs } from '../../agent-fs/index.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { baseRef, git, repositoryRoot } from './git-command.js';
import { GitQuerySchema, type GitRoutesOptions } from './git-query.js';

const GitDiffSchema = z.object({ modified: z.string().nullable(), original: z.string().nullable() }).openapi('GitDiff');

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

export function registerGitDiff(app: OpenAPIHono, options: GitRoutesOptions): void {
  // The current content is read with the agent's rights: the file may be a link the agent planted.
  const files = createAgentFs({ user: options.agentUser });
  app.openapi(gitDiffRoute, async (c) => {
    const query = c.req.valid('query');
    const file = resolve(options.workspaceDir, query.path);
    const user = options.agentUser;
    const root = await repositoryRoot(user, dirname(file));
    if (root === undefined) return c.json({ modified: null, original: null }, 200);
    const ref = await baseRef(user, root, query.ref);
    // git names the root by its real path; a workspace reached through a symlink must match it.
    const dir = await realpath(dirname(file)).catch(() => dirname(file));
    const original = await git(user, root, ['show', `${ref}:${relative(root, join(dir, basename(file)))}`]);
    const modified = await files.readFile(file).then((bytes) => bytes.toString('utf8'), () => null);
    return c.json({ modified, original: original.ok ? original.stdout : null }, 200);
  });
}
