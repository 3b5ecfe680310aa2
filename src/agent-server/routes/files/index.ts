import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AgentUser } from '../../agent-user.js';
import { createAgentFs } from '../../agent-fs/index.js';
import { registerDownloadFile } from './download-file.js';
import { registerUnpackArchive } from './unpack-archive.js';
import { registerUploadFile } from './upload-file.js';

export { registerDownloadTrajectory } from './download-trajectory.js';
export { UNPACK_PATH } from './unpack-archive.js';

/**
 * Files moved in and out of the sandbox: POST /api/file/upload, GET /api/file/download and POST
 * /api/file/unpack, with the rights of `agentUser` (who runs the agent's commands) when given, and
 * what is written belongs to it.
 */
export function registerFileRoutes(app: OpenAPIHono, agentUser: AgentUser | undefined): void {
  const files = createAgentFs({ user: agentUser });
  registerUploadFile(app, files);
  registerDownloadFile(app, files);
  registerUnpackArchive(app, agentUser);
}
