import type { OpenAPIHono } from '@hono/zod-openapi';
import { registerDownloadFile } from './download-file.js';
import { registerUploadFile } from './upload-file.js';

export { registerDownloadTrajectory } from './download-trajectory.js';

/** Files moved in and out of the sandbox: POST /api/file/upload and GET /api/file/download. */
export function registerFileRoutes(app: OpenAPIHono): void {
  registerUploadFile(app);
  registerDownloadFile(app);
}
