import type { AgentUser } from '../../agent-user.js';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { registerDownloadFile } from './download-file.js';
import { registerUploadFile } from './upload-file.js';

export { registerDownloadTrajectory } from './download-trajectory.js';

/** Files moved in and out of the sandbox: POST /api/file/upload and GET /api/file/download. */
/** Uploads belong to `agentUser` (who runs the agent's commands) when given. */
export function registerFileRoutes(app: OpenAPIHono, agentUser: AgentUser | undefined): void {
  registerUploadFile(app, agentUser);
  registerDownloadFile(app);
}
