/** Query and form of the file routes, as OpenHands' /api/file/upload and /api/file/download take them. */
import { isAbsolute } from 'node:path';
import { z } from '@hono/zod-openapi';

export const FilePathQuerySchema = z.object({
  path: z
    .string()
    .min(1)
    .refine((path) => !path.includes('\0'), 'Path must not contain NUL bytes')
    .refine(isAbsolute, 'Path must be absolute')
    .openapi({ description: 'Absolute file path', example: '/workspace/notes.txt' }),
});

export const UploadFileFormSchema = z
  .object({
    file: z
      .custom<File>((value) => value instanceof File, 'Expected UploadFile')
      .openapi({ type: 'string', format: 'binary', description: 'The file content' }),
  })
  .openapi('Body_upload_file');

export const FileBytesSchema = z.string().openapi({ format: 'binary' });
