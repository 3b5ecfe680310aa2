import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { registerBatchGetEvents } from './batch-get-events.js';
import { registerCountEvents } from './count-events.js';
import { registerExportEvents } from './export-events.js';
import { registerGetEvent } from './get-event.js';
import { registerImportEvents } from './import-events.js';
import { registerRespondToConfirmation } from './respond-to-confirmation.js';
import { registerSearchEvents } from './search-events.js';
import { registerSendMessage } from './send-message.js';

export function registerEventRoutes(app: OpenAPIHono, ctx: ConversationContext): void {
  registerSendMessage(app, ctx);
  // Before /events/{event_id}, which would otherwise take these names for event ids.
  registerSearchEvents(app, ctx);
  registerCountEvents(app, ctx);
  registerExportEvents(app, ctx);
  registerImportEvents(app, ctx);
  registerRespondToConfirmation(app, ctx);
  registerGetEvent(app, ctx);
  registerBatchGetEvents(app, ctx);
}
