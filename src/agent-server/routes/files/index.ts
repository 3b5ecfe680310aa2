import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AgentUser } from '../../agent-user.js';
import { createAgentFs } from '../../agent-fs/index.js';
import { registerDownloadFile } from './download-file.js';
import { registerUploadFile } from './upload-file.js';

export { registerDownloadTrajectory } from './download-trajectory.js';

/**
 * Files moved in and out of the sandbox: POST /api/file/upload and GET /api/file/download, with the
 * rights of `agentUser` (who runs the agent's commands) when given, and uploads belong to it.
 */
export function registerFileRoutes(app: OpenAPIHono, agentUser: AgentUser | undefined): void {
  const files = createAgentFs({ user: agentUser });
  registerUploadFile(app, files);
  registerDownloadFile(app, files);
}
