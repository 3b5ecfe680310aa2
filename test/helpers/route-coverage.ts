import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env, Hono } from 'hono';

export type OpenAPIDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>;

/** Served on purpose outside the API description: the pointer at /, the description itself, its page, the scrape. */
export const NOT_API_OPERATIONS: readonly string[] = ['/', '/openapi.json', '/docs', '/docs/*', '/metrics'];

const OPERATION_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `/sandboxes/:sandbox_id{[0-9a-f]+}` as OpenAPI writes it: `/sandboxes/{sandbox_id}`. */
export function toOpenApiPath(honoPath: string): string {
  return honoPath.replace(/:([^/{?]+)(?:\{[^/]*\})?\??/g, '{$1}');
}

function isIgnored(path: string, ignore: readonly string[]): boolean {
  return ignore.some((pattern) => (pattern.endsWith('/*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern));
}

/**
 * The app's routes as `"GET /path/{param}"`, sorted and unique. Middleware (`app.use`) and
 * `app.all` routes are left out: they answer every method, so no single operation describes them.
 * `ignore` takes OpenAPI-style paths; one ending in `/*` covers everything under it.
 */
export function listAppRoutes<E extends Env>(app: Hono<E>, ignore: readonly string[] = NOT_API_OPERATIONS): string[] {
  const routes = new Set<string>();
  for (const route of app.routes) {
    if (route.method === 'ALL') continue;
    const path = toOpenApiPath(route.path);
    if (!isIgnored(path, ignore)) routes.add(`${route.method} ${path}`);
  }
  return [...routes].sort();
}

/** The operations of an OpenAPI document as `"GET /path/{param}"`, sorted. */
export function listDocumentedRoutes(document: OpenAPIDocument): string[] {
  const routes: string[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of Object.keys(item)) {
      if (OPERATION_METHODS.has(method)) routes.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return routes.sort();
}

export interface RouteCoverage {
  /** Served by the app but missing from the document. */
  undocumented: string[];
  /** In the document but not served by the app. */
  unserved: string[];
}

/**
 * Compares what an app serves with what its document describes; both lists are empty when they
 * agree. `ignore` extends `NOT_API_OPERATIONS`, e.g. with WebSocket routes, which OpenAPI cannot
 * describe.
 */
export function compareRoutesWithDocument<E extends Env>(
  app: Hono<E>,
  document: OpenAPIDocument,
  ignore: readonly string[] = [],
): RouteCoverage {
  const ignored = [...NOT_API_OPERATIONS, ...ignore];
  const served = listAppRoutes(app, ignored);
  const documented = listDocumentedRoutes(document).filter((route) => !isIgnored(route.slice(route.indexOf(' ') + 1), ignored));
  return {
    undocumented: served.filter((route) => !documented.includes(route)),
    unserved: documented.filter((route) => !served.includes(route)),
  };
}
