import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { EventSchema } from '../../../events/index.js';
import type { ConversationContext } from '../../services/context.js';
import { importEvents } from '../../services/events/import-events.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, validationErrorResponse } from '../responses.js';

export const importEventsRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/events/import',
  tags: ['Events'],
  summary: 'Import events',
  description:
    'The body is NDJSON (one event per line, as /events/export writes) or a JSON array of events of any kind. ' +
    'Every record is validated first; then all are appended in one batch with their ids and timestamps, or none is, ' +
    'even across a crash. Problems are reported together, with loc ["body", <record index>, ...field]. An id already ' +
    'stored is refused. A body over the server\'s limit (MAX_REQUEST_BODY_MB) is a 413.',
  request: {
    params: ConversationPathSchema,
    body: {
      required: true,
      description: 'One event per line (NDJSON), or a JSON array of events.',
      content: { 'application/x-ndjson': { schema: z.array(EventSchema) } },
    },
  },
  responses: {
    200: jsonContent(z.object({ success: z.boolean(), count: z.int() }), 'The number of events appended'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerImportEvents(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(importEventsRoute, async (c) => {
    const { conversation_id } = c.req.valid('param');
    // Streamed as it arrives (the JSON depth guard leaves this route's body alone), unless read already.
    const raw = c.req.raw;
    const body = raw.body && !raw.bodyUsed ? raw.body.pipeThrough(new TextDecoderStream()) : [await c.req.text()];
    const count = await importEvents(ctx, { conversationId: conversation_id, body });
    return c.json({ success: true, count }, 200);
  });
}
