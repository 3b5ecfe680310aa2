import { type AgentUser, giveToAgent, makeParentsForAgent } from '../../agent-user.js';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
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
    403: jsonContent(DetailSchema, 'The agent-server may not write there'),
    ...validationErrorResponse,
  },
});

export function registerUploadFile(app: OpenAPIHono, agentUser?: AgentUser): void {
  app.openapi(uploadFileRoute, async (c) => {
    const { path } = c.req.valid('query');
    const { file } = c.req.valid('form');
    try {
      await writeFileAtomically(path, file, agentUser);
    } catch (error) {
      throw fileSystemError(error);
    }
    return c.json({ success: true }, 200);
  });
}

/**
 * Writes beside the target and renames over it, so a reader never sees half a file and a failed
 * upload leaves the old one in place. Renaming onto a directory fails with EISDIR.
 */
async function writeFileAtomically(path: string, file: File, agentUser: AgentUser | undefined): Promise<void> {
  await makeParentsForAgent(agentUser, path);
  const temporary = join(dirname(path), `.${basename(path)}.upload-${randomBytes(6).toString('hex')}`);
  try {
    await pipeline(Readable.fromWeb(file.stream() as NodeReadableStream<Uint8Array>), createWriteStream(temporary, { flags: 'wx' }));
    await giveToAgent(agentUser, [temporary]);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
