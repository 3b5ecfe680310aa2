import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { GitContext } from '../../services/git/context.js';
import { getGitDiff } from '../../services/git/get-git-diff.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { GitQuerySchema } from './git-query.js';

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

export function registerGitDiff(app: OpenAPIHono, ctx: GitContext): void {
  app.openapi(gitDiffRoute, async (c) => c.json(await getGitDiff(ctx, c.req.valid('query')), 200));
}
