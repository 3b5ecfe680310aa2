/**
 * POST /api/skills in OpenHands' shape. OpenHands loads skills (prompt snippets) from public, user,
 * project and organisation sources; our agent loads none, so every source contributes nothing and
 * the list is honest about it rather than absent (clients render an empty list without errors).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { requireJsonBody } from '../json-body.js';
import { jsonContent, validationErrorResponse } from '../responses.js';

const SkillsRequestSchema = z
  .looseObject({
    load_public: z.boolean().optional(),
    load_user: z.boolean().optional(),
    load_project: z.boolean().optional(),
    load_org: z.boolean().optional(),
    project_dir: z.string().nullish(),
  })
  .openapi('SkillsRequest');

const SkillInfoSchema = z
  .object({ name: z.string(), type: z.enum(['repo', 'knowledge', 'agentskills']), content: z.string() })
  .openapi('SkillInfo');

const SkillsResponseSchema = z
  .object({ skills: z.array(SkillInfoSchema), sources: z.record(z.string(), z.int()) })
  .openapi('SkillsResponse');

const getSkillsRoute = createRoute({
  method: 'post',
  path: '/api/skills',
  tags: ['Skills'],
  summary: 'Skills the agent would load: none, as this agent-server loads no skills',
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { 'application/json': { schema: SkillsRequestSchema } } } },
  responses: { 200: jsonContent(SkillsResponseSchema, 'Skills and how many came from each source'), ...validationErrorResponse },
});

export function registerGetSkills(app: OpenAPIHono): void {
  app.openapi(getSkillsRoute, (c) => {
    const request = c.req.valid('json');
    const sources = Object.fromEntries(
      (['public', 'user', 'project', 'org'] as const)
        .filter((source) => request[`load_${source}`] !== false)
        .map((source) => [source, 0]),
    );
    return c.json({ skills: [], sources }, 200);
  });
}
