import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { fileSystemError, notRegularFileError, pathIsDirectoryError } from './file-system-error.js';
import { FileBytesSchema, FilePathQuerySchema } from './models.js';

export const downloadFileRoute = createRoute({
  method: 'get',
  path: '/api/file/download',
  tags: ['Files'],
  summary: 'Read a regular file at an absolute path',
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
    const { handle, size } = await openRegularFile(path);
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

/**
 * Opens `path` before answering, so a file we may not read is a 403 and not a broken 200. Opened
 * with O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever, holding
 * one of the few threads every file operation of the server shares. Only a regular file is served
 * (a FIFO, socket or device has no size and may never end); O_NONBLOCK changes nothing for those.
 */
async function openRegularFile(path: string): Promise<{ handle: FileHandle; size: number }> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw fileSystemError(error);
  }
  try {
    const found = await handle.stat();
    if (found.isDirectory()) throw pathIsDirectoryError();
    if (!found.isFile()) throw notRegularFileError();
    return { handle, size: found.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
