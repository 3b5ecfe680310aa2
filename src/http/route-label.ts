import type { Context } from 'hono';
import { matchedRoutes, routePath } from 'hono/route';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by a middleware that serves requests whatever their path (preview URLs' host mode): the label they all get. */
    routeLabel: string;
  }
}

/** Hono's method name for routes registered with `app.use` or `app.all`. */
const ANY_METHOD = 'ALL';

/**
 * The route pattern a request matched (`/api/v1/sandboxes/:sandbox_id/pause`), never the raw path,
 * so metric labels and log fields stay few however many ids there are. It is the first route
 * registered for a specific method, which is the endpoint Hono dispatches to even when a middleware
 * (auth, validation) answered first. A request no such route matched is labelled with the pattern of
 * the handler that answered it: a middleware's (`/*`, `/api/*`) or an `app.all` route's. A
 * middleware that serves any path names its own label (`routeLabel`). Call it after `await next()`.
 */
export function routeLabel(c: Context): string {
  const named = c.get('routeLabel');
  if (named !== undefined) return named;
  const endpoint = matchedRoutes(c).find((route) => route.method !== ANY_METHOD);
  return endpoint?.path ?? routePath(c);
}
