import { performance } from 'node:perf_hooks';
import { createMiddleware } from 'hono/factory';
import { routeLabel } from '../route-label.js';
import type { Metrics } from './create-metrics.js';

/** Counts and times every request; register it before the routes (`app.use('*', ...)`). */
export function metricsMiddleware(metrics: Metrics) {
  return createMiddleware(async function recordHttpMetrics(c, next) {
    const startedAt = performance.now();
    await next();
    observeRequest(metrics, { method: c.req.method, route: routeLabel(c), status: c.res.status, startedAt });
  });
}

/** Counts and times one answered request, for every server that answers one (the proxy's fast path too). */
export function observeRequest(metrics: Metrics, request: { method: string; route: string; status: number; startedAt: number }): void {
  const labels = { method: request.method, route: request.route, status: String(request.status) };
  metrics.httpRequests.inc(labels);
  metrics.httpRequestDuration.observe(labels, (performance.now() - request.startedAt) / 1000);
}
