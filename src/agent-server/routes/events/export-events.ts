import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { exportEvents } from '../../services/events/export-events.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, validationErrorResponse } from '../responses.js';

/**
 * Typed as a plain string on purpose: @hono/zod-openapi's types take `application/x-ndjson` for a
 * malformed JSON media type and would then accept no response from the handler at all.
 */
const NDJSON: string = 'application/x-ndjson';

export const exportEventsRoute = createRoute({
  method: 'get',
  path: '/api/conversations/{conversation_id}/events/export',
  tags: ['Events'],
  summary: 'Export every event as NDJSON',
  description: 'One event per line, in the order they were appended. The body is streamed.',
  request: { params: ConversationPathSchema },
  responses: {
    200: { description: 'The events, one JSON object per line', content: { [NDJSON]: { schema: z.string() } } },
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerExportEvents(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(exportEventsRoute, async (c) => {
    const lines = await exportEvents(ctx, c.req.valid('param').conversation_id);
    return c.body(streamOf(lines), 200, { 'Content-Type': NDJSON });
  });
}

/** Pulls one line at a time, so a large history is never held in memory and a slow reader slows the read. */
function streamOf(lines: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const iterator = lines[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
