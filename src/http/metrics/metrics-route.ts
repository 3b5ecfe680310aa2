import type { Env, Hono } from 'hono';
import type { Metrics } from './create-metrics.js';

/**
 * GET /metrics in Prometheus' text format. A plain route, not an OpenAPI one: it is for scrapers,
 * and its body is not JSON.
 */
export function registerMetricsRoute<E extends Env>(app: Hono<E>, metrics: Metrics): void {
  app.get('/metrics', async (c) =>
    c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }),
  );
}
