import { performance } from 'node:perf_hooks';
import { createMiddleware } from 'hono/factory';
import { routeLabel } from '../route-label.js';
import type { Metrics } from './create-metrics.js';

/** Counts and times every request; register it before the routes (`app.use('*', ...)`). */
export function metricsMiddleware(metrics: Metrics) {
  return createMiddleware(async function recordHttpMetrics(c, next) {
    const startedAt = performance.now();
    await next();
    const labels = { method: c.req.method, route: routeLabel(c), status: String(c.res.status) };
    metrics.httpRequests.inc(labels);
    metrics.httpRequestDuration.observe(labels, (performance.now() - startedAt) / 1000);
  });
}
