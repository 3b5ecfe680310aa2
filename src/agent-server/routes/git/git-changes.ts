import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { GitContext } from '../../services/git/context.js';
import { getGitChanges, GIT_CHANGE_STATUSES } from '../../services/git/get-git-changes.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { GitQuerySchema } from './git-query.js';

const GitChangeStatusSchema = z.enum(GIT_CHANGE_STATUSES).openapi('GitChangeStatus');
const GitChangeSchema = z.object({ path: z.string(), status: GitChangeStatusSchema }).openapi('GitChange');

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

export function registerGitChanges(app: OpenAPIHono, ctx: GitContext): void {
  app.openapi(gitChangesRoute, async (c) => c.json(await getGitChanges(ctx, c.req.valid('query')), 200));
}
