import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { exportConversationTrajectory } from '../../services/conversations/export-conversation-trajectory.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, validationErrorResponse } from '../responses.js';

export const downloadTrajectoryRoute = createRoute({
  method: 'get',
  path: '/api/file/download-trajectory/{conversation_id}',
  tags: ['Files'],
  summary: 'A ZIP of the conversation: its settings (keys masked, secrets left out) and every event',
  request: { params: ConversationPathSchema },
  responses: {
    200: { description: 'The ZIP archive', content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } } },
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerDownloadTrajectory(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(downloadTrajectoryRoute, async (c) => {
    const id = c.req.valid('param').conversation_id;
    const archive = await exportConversationTrajectory(ctx, id);
    return c.body(new Uint8Array(archive), 200, {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${id.replace(/-/g, '')}.zip"`,
    });
  });
}
