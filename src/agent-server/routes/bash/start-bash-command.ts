import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { BashCommands } from '../../bash/bash-commands.js';
import { requireJsonBody } from '../json-body.js';
import { jsonContent, validationErrorResponse } from '../responses.js';
import { BashCommandSchema, ExecuteBashRequestSchema } from '../../../contracts/agent-server/bash.js';

export const startBashCommandRoute = createRoute({
  method: 'post',
  path: '/api/bash/start_bash_command',
  tags: ['Bash'],
  summary: 'Start a command in the background; its output becomes a BashOutput event',
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { 'application/json': { schema: ExecuteBashRequestSchema } } } },
  responses: { 200: jsonContent(BashCommandSchema, 'The command, recorded and started'), ...validationErrorResponse },
});

export function registerStartBashCommand(app: OpenAPIHono, commands: BashCommands): void {
  app.openapi(startBashCommandRoute, async (c) => {
    const { command } = await commands.start(c.req.valid('json'));
    return c.json(command, 200);
  });
}
