import type { EventRouteRegistrar } from './deps.js';
import { registerSearchEvents } from './search.js';
import { registerEventSocket } from './socket.js';
import { registerStreamEvents } from './stream.js';

export const registerEventRoutes: EventRouteRegistrar = (app, deps) => {
  registerSearchEvents(app, deps);
  registerStreamEvents(app, deps);
  registerEventSocket(app, deps);
};
