/**
 * POST /api/skills in OpenHands' shape: the skills a conversation in `project_dir` (the server's
 * workspace when absent) would load: AGENTS.md and `.openhands/microagents/` (or `skills/`) files,
 * read with the agent's rights. Public, user and organisation skills come from places this server
 * does not fetch (OpenHands' public registry, a user's home), so those sources count none.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { resolve } from 'node:path';
import type { AgentUser } from '../../agent-user.js';
import { createAgentFs } from '../../agent-fs/index.js';
import { loadProjectSkills } from '../../instructions/load-skills.js';
import { requireJsonBody } from '../json-body.js';
import { jsonContent, validationErrorResponse } from '../responses.js';

const SkillsRequestSchema = z
  .looseObject({
    load_public: z.boolean().optional(),
    load_user: z.boolean().optional(),
    load_project: z.boolean().optional(),
    load_org: z.boolean().optional(),
    project_dir: z.string().min(1).refine((dir) => !dir.includes('\0'), 'Must not contain NUL bytes').nullish(),
  })
  .openapi('SkillsRequest');

const SkillInfoSchema = z
  .object({
    name: z.string(),
    type: z.enum(['repo', 'knowledge', 'agentskills']),
    content: z.string(),
    triggers: z.array(z.string()).openapi({ description: 'Words that bring a knowledge skill into a user message; empty for repo skills' }),
    source: z.string().nullable().openapi({ description: 'The file it was read from, relative to the project' }),
  })
  .openapi('SkillInfo');

const SkillsResponseSchema = z
  .object({ skills: z.array(SkillInfoSchema), sources: z.record(z.string(), z.int()) })
  .openapi('SkillsResponse');

const getSkillsRoute = createRoute({
  method: 'post',
  path: '/api/skills',
  tags: ['Skills'],
  summary: "The skills a conversation in project_dir loads: AGENTS.md and the project's .openhands/microagents",
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { 'application/json': { schema: SkillsRequestSchema } } } },
  responses: { 200: jsonContent(SkillsResponseSchema, 'Skills and how many came from each source'), ...validationErrorResponse },
});

export function registerGetSkills(app: OpenAPIHono, options: { workspaceDir: string; agentUser?: AgentUser }): void {
  app.openapi(getSkillsRoute, async (c) => {
    const request = c.req.valid('json');
    const project =
      request.load_project === false ? [] : await loadProjectSkills(resolve(options.workspaceDir, request.project_dir ?? '.'), createAgentFs({ user: options.agentUser }));
    const counts = { public: 0, user: 0, project: project.length, org: 0 };
    const sources = Object.fromEntries(
      (['public', 'user', 'project', 'org'] as const).filter((source) => request[`load_${source}`] !== false).map((source) => [source, counts[source]]),
    );
    const skills = project.map((skill) => ({ name: skill.name, type: skill.type, content: skill.content, triggers: skill.triggers, source: skill.source }));
    return c.json({ skills, sources }, 200);
  });
}
