import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { selectableToolNames } from '../../agent/tools/index.js';
import { jsonContent } from '../responses.js';

const listToolsRoute = createRoute({
  method: 'get',
  path: '/api/tools/',
  tags: ['Tools'],
  summary: 'Names of the tools a conversation may choose in agent.tools (finish and think come with every agent)',
  responses: { 200: jsonContent(z.array(z.string()), 'Tool names') },
});

export function registerListTools(app: OpenAPIHono): void {
  const names = selectableToolNames();
  app.openapi(listToolsRoute, (c) => c.json(names, 200));
}
