import type { OpenAPIHono } from '@hono/zod-openapi';
import type { BashCommands } from '../../bash/bash-commands.js';
import type { BashEventLog } from '../../bash/bash-event-log.js';
import { registerBatchGetBashEvents } from './batch-get-bash-events.js';
import { registerClearBashEvents } from './clear-bash-events.js';
import { registerExecuteBashCommand } from './execute-bash-command.js';
import { registerGetBashEvent } from './get-bash-event.js';
import { registerSearchBashEvents } from './search-bash-events.js';
import { registerStartBashCommand } from './start-bash-command.js';

export { OUTPUT_LIMIT_CHARS, TIMEOUT_EXIT_CODE } from '../../bash/bash-commands.js';
export {
  BashCommandSchema,
  BashEventSchema,
  BashOutputSchema,
  ExecuteBashRequestSchema,
  type BashCommand,
  type BashEvent,
  type BashOutput,
  type ExecuteBashRequest,
} from '../../../contracts/agent-server/bash.js';

export interface BashRoutesOptions {
  /** Runs the commands and records them in `events`. */
  commands: BashCommands;
  events: BashEventLog;
}

/**
 * Commands run in the sandbox on request, OpenHands' /api/bash: start one in the background or run
 * one and wait, then search, get, or clear the recorded events (also streamed on /sockets/bash-events).
 */
export function registerBashRoutes(app: OpenAPIHono, options: BashRoutesOptions): void {
  registerExecuteBashCommand(app, options.commands);
  registerStartBashCommand(app, options.commands);
  // Before /bash_events/{event_id}, which would otherwise take "search" for an id.
  registerSearchBashEvents(app, options.events);
  registerBatchGetBashEvents(app, options.events);
  registerGetBashEvent(app, options.events);
  registerClearBashEvents(app, options.events);
}
