import type { AppConversationRouteRegistrar } from './deps.js';
import { registerAppConversationEventRoutes } from './events.js';
import { registerAppConversationItemRoutes } from './item.js';
import { registerPeerEventRoutes } from './peer-event-routes.js';
import { registerSearchAppConversations } from './search.js';
import { registerStartAppConversation } from './start.js';
import { registerStartTaskRoutes } from './start-tasks.js';

export type { AppConversationRouteDeps } from './deps.js';

/** Static paths (/search, /count, /start-tasks) are registered before /{id} so they win. */
export const registerAppConversationRoutes: AppConversationRouteRegistrar = (app, deps) => {
  for (const register of [
    registerStartTaskRoutes,
    registerSearchAppConversations,
    registerStartAppConversation,
    registerAppConversationEventRoutes,
    registerAppConversationItemRoutes,
    registerPeerEventRoutes,
  ]) {
    register(app, deps);
  }
};
