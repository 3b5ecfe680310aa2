import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { BashCommands } from '../../bash/bash-commands.js';
import { requireJsonBody } from '../json-body.js';
import { jsonContent, validationErrorResponse } from '../responses.js';
import { BashOutputSchema, ExecuteBashRequestSchema } from '../../../contracts/agent-server/bash.js';

export const executeBashCommandRoute = createRoute({
  method: 'post',
  path: '/api/bash/execute_bash_command',
  tags: ['Bash'],
  summary: 'Run a command with bash -c and wait for it to finish',
  description: 'The command and its output are recorded as bash events, as with start_bash_command.',
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { 'application/json': { schema: ExecuteBashRequestSchema } } } },
  responses: {
    200: jsonContent(BashOutputSchema, 'The command finished, failed, or was killed at its timeout (exit_code -1)'),
    ...validationErrorResponse,
  },
});

export function registerExecuteBashCommand(app: OpenAPIHono, commands: BashCommands): void {
  app.openapi(executeBashCommandRoute, async (c) => {
    const { output } = await commands.start(c.req.valid('json'), c.req.raw.signal);
    return c.json(await output, 200);
  });
}
