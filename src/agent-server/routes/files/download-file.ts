import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { fileSystemError, pathIsDirectoryError } from './file-system-error.js';
import { FileBytesSchema, FilePathQuerySchema } from './models.js';

export const downloadFileRoute = createRoute({
  method: 'get',
  path: '/api/file/download',
  tags: ['Files'],
  summary: 'Read a file at an absolute path',
  request: { query: FilePathQuerySchema },
  responses: {
    200: { description: 'The file, streamed', content: { 'application/octet-stream': { schema: FileBytesSchema } } },
    403: jsonContent(DetailSchema, 'The agent-server may not read it'),
    404: jsonContent(DetailSchema, 'File not found'),
    ...validationErrorResponse,
  },
});

export function registerDownloadFile(app: OpenAPIHono): void {
  app.openapi(downloadFileRoute, async (c) => {
    const { path } = c.req.valid('query');
    const found = await stat(path).catch((error: unknown) => {
      throw fileSystemError(error);
    });
    if (found.isDirectory()) throw pathIsDirectoryError();
    const body = await openStream(path);
    return c.body(body, 200, {
      'content-type': 'application/octet-stream',
      'content-length': String(found.size),
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(basename(path))}`,
    });
  });
}

/** Opens the file before answering, so a file we may not read is a 403 and not a broken 200. */
function openStream(path: string): Promise<ReadableStream<Uint8Array>> {
  return new Promise((resolve, reject) => {
    const stream = createReadStream(path);
    stream.once('error', (error) => reject(fileSystemError(error)));
    stream.once('open', () => resolve(Readable.toWeb(stream) as ReadableStream<Uint8Array>));
  });
}
