import { tmpdir } from 'node:os';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { closeTools, createDefaultTools } from '../../agent/tools/index.js';
import { jsonContent } from '../responses.js';

const listToolsRoute = createRoute({
  method: 'get',
  path: '/api/tools/',
  tags: ['Tools'],
  summary: 'Names of the tools every conversation’s agent gets, in the order the LLM sees them',
  responses: { 200: jsonContent(z.array(z.string()), 'Tool names') },
});

/** The names are read from the tools themselves, built once and closed again (nothing runs yet). */
async function defaultToolNames(): Promise<string[]> {
  const tools = createDefaultTools({ workspaceDir: tmpdir() });
  try {
    return tools.map((tool) => tool.name);
  } finally {
    await closeTools(tools);
  }
}

export async function registerListTools(app: OpenAPIHono): Promise<void> {
  const names = await defaultToolNames();
  app.openapi(listToolsRoute, (c) => c.json(names, 200));
}
