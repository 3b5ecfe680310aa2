import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AgentFs } from '../../agent-fs/index.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { fileSystemError } from './file-system-error.js';
import { FileBytesSchema, FilePathQuerySchema } from './models.js';

export const downloadFileRoute = createRoute({
  method: 'get',
  path: '/api/file/download',
  tags: ['Files'],
  summary: 'Read a regular file at an absolute path',
  request: { query: FilePathQuerySchema },
  responses: {
    200: { description: 'The file, streamed', content: { 'application/octet-stream': { schema: FileBytesSchema } } },
    403: jsonContent(DetailSchema, "The agent's user may not read it"),
    404: jsonContent(DetailSchema, 'File not found'),
    ...validationErrorResponse,
  },
});

/**
 * Read with the agent's rights (`files`): a link the agent planted in the workspace must not hand
 * out what the agent could not read itself. Only a regular file is served (a FIFO, socket or device
 * has no size and may never end), and it is opened before answering, so a refusal is a 403 and not
 * a broken 200.
 */
export function registerDownloadFile(app: OpenAPIHono, files: AgentFs): void {
  app.openapi(downloadFileRoute, async (c) => {
    const { path } = c.req.valid('query');
    const { handle, stats } = await files.openFile(path).catch((error: unknown) => {
      throw fileSystemError(error);
    });
    const size = stats.size;
    const stream = handle.createReadStream();
    // A kernel's pseudo-file (/proc, /sys) says size 0 and has bytes: its length is not known until
    // read, so it goes chunked rather than with a length its body would overrun.
    return c.body(Readable.toWeb(stream) as ReadableStream<Uint8Array>, 200, {
      'content-type': 'application/octet-stream',
      ...(size > 0 ? { 'content-length': String(size) } : {}),
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(basename(path))}`,
    });
  });
}
