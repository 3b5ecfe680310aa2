import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationService } from '../../conversations/service.js';
import { registerBatchGetEvents } from './batch-get-events.js';
import { registerCountEvents } from './count-events.js';
import { registerExportEvents } from './export-events.js';
import { registerGetEvent } from './get-event.js';
import { registerImportEvents } from './import-events.js';
import { registerRespondToConfirmation } from './respond-to-confirmation.js';
import { registerSearchEvents } from './search-events.js';
import { registerSendMessage } from './send-message.js';

export function registerEventRoutes(app: OpenAPIHono, conversations: ConversationService): void {
  registerSendMessage(app, conversations);
  // Before /events/{event_id}, which would otherwise take these names for event ids.
  registerSearchEvents(app, conversations);
  registerCountEvents(app, conversations);
  registerExportEvents(app, conversations);
  registerImportEvents(app, conversations);
  registerRespondToConfirmation(app, conversations);
  registerGetEvent(app, conversations);
  registerBatchGetEvents(app, conversations);
}
