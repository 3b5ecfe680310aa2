import type { OpenAPIHono } from '@hono/zod-openapi';
import { registerExecuteBashCommand, type BashRoutesOptions } from './execute-bash-command.js';

export { OUTPUT_LIMIT_CHARS, TIMEOUT_EXIT_CODE, type BashRoutesOptions } from './execute-bash-command.js';
export { BashOutputSchema, ExecuteBashRequestSchema, type BashOutput, type ExecuteBashRequest } from '../../../contracts/agent-server/bash.js';

/** Commands run in the sandbox on request: POST /api/bash/execute_bash_command. */
export function registerBashRoutes(app: OpenAPIHono, options: BashRoutesOptions): void {
  registerExecuteBashCommand(app, options);
}
