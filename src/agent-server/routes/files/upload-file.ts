import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { AgentFs } from '../../agent-fs/index.js';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { DetailSchema, jsonContent, SuccessSchema, validationErrorResponse } from '../responses.js';
import { fileSystemError } from './file-system-error.js';
import { FilePathQuerySchema, UploadFileFormSchema } from './models.js';
import { requireMultipartBody } from './multipart-body.js';

export const uploadFileRoute = createRoute({
  method: 'post',
  path: '/api/file/upload',
  tags: ['Files'],
  summary: 'Write a file at an absolute path, creating its parent directories',
  middleware: [requireMultipartBody] as const,
  request: {
    query: FilePathQuerySchema,
    body: { required: true, content: { 'multipart/form-data': { schema: UploadFileFormSchema } } },
  },
  responses: {
    200: jsonContent(SuccessSchema, 'The file was written'),
    403: jsonContent(DetailSchema, "The agent's user may not write there"),
    ...validationErrorResponse,
  },
});

/**
 * Written with the agent's rights and given to it (`files`), beside the target and renamed over it:
 * a reader never sees half a file, a failed upload leaves the old one in place, and no link the
 * agent planted on the way leads the write where the agent could not write itself.
 */
export function registerUploadFile(app: OpenAPIHono, files: AgentFs): void {
  app.openapi(uploadFileRoute, async (c) => {
    const { path } = c.req.valid('query');
    const { file } = c.req.valid('form');
    const source = Readable.fromWeb(file.stream() as NodeReadableStream<Uint8Array>);
    try {
      await files.replaceFile(path, source, { makeParents: true });
    } catch (error) {
      throw fileSystemError(error);
    }
    return c.json({ success: true }, 200);
  });
}
