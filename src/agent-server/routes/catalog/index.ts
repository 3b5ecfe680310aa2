import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AgentUser } from '../../agent-user.js';
import { registerLlmCatalog } from './llm.js';
import { registerSettingsSchemas } from './settings-schemas.js';
import { registerGetSkills } from './skills.js';
import { registerListTools } from './tools.js';
import { registerWorkspaceServices } from './workspace-services.js';

export { providerOf } from './llm.js';
export { settingsSchema, type SettingsSchema } from './settings-schemas.js';

export interface CatalogOptions {
  /** The LLM model of every conversation this server holds. */
  configuredModels: () => string[];
  /** Where project skills are read when a request names no project_dir. */
  workspaceDir: string;
  /** Project skills are read with the agent's rights. */
  agentUser?: AgentUser;
}

/** What this server offers, read by OpenHands clients before they start a conversation. */
export async function registerCatalogRoutes(app: OpenAPIHono, options: CatalogOptions): Promise<void> {
  registerLlmCatalog(app, options.configuredModels);
  registerSettingsSchemas(app);
  registerListTools(app);
  registerGetSkills(app, options);
  registerWorkspaceServices(app);
}
