import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

type HttpLabel = 'method' | 'route' | 'status';

/** One registry per app, so two apps in one process (tests) never share counts. */
export interface Metrics {
  registry: Registry;
  /** Labelled by route pattern, never by raw path: ids in paths would make a series per sandbox. */
  httpRequests: Counter<HttpLabel>;
  httpRequestDuration: Histogram<HttpLabel>;
}

/** A registry with the process's default metrics (CPU, memory, event loop, GC) and HTTP metrics. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpRequestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request (until the handler returned; streamed bodies may run on)',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
  };
}
