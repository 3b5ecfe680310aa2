import { describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../src/errors/index.js';
import { createMetrics, createSandboxMetrics, metricsMiddleware, registerMetricsRoute } from '../../src/http/metrics/index.js';
import { createDemoApp } from './demo-app.js';

function metricsApp() {
  const metrics = createMetrics();
  const app = createDemoApp((app) => {
    app.use('*', metricsMiddleware(metrics));
    registerMetricsRoute(app, metrics);
  });
  return { app, metrics };
}

async function scrape(app: ReturnType<typeof metricsApp>['app']): Promise<string> {
  const response = await app.request('/metrics');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return response.text();
}

/** The value of one sample line, e.g. `http_requests_total{method="GET",...} 2`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('HTTP metrics', () => {
  it('counts requests by method, route pattern and status, never by raw path', async () => {
    const { app } = metricsApp();
    await app.request('/api/v1/things/a');
    await app.request('/api/v1/things/b');
    await app.request('/api/v1/things/missing');
    await app.request('/api/v1/things/a/pause', { method: 'POST' });
    await app.request('/no/such/route/c0ffee');

    const text = await scrape(app);
    expect(sample(text, 'http_requests_total{method="GET",route="/api/v1/things/:thing_id",status="200"}')).toBe(2);
    expect(sample(text, 'http_requests_total{method="GET",route="/api/v1/things/:thing_id",status="404"}')).toBe(1);
    expect(sample(text, 'http_requests_total{method="POST",route="/api/v1/things/:thing_id/pause",status="200"}')).toBe(1);
    // Unmatched paths share the pattern of the middleware that saw them.
    expect(sample(text, 'http_requests_total{method="GET",route="/*",status="404"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/things/:thing_id",status="200"}')).toBe(2);
    expect(text).not.toMatch(/things\/a|things\/b|c0ffee/);
  });

  it('labels a request a middleware refused with the route it was headed for', async () => {
    const metrics = createMetrics();
    const app = createDemoApp((app) => {
      app.use('*', metricsMiddleware(metrics));
      app.use('/api/*', async () => {
        throw new UnauthorizedError();
      });
    });
    expect((await app.request('/api/v1/things/a')).status).toBe(401);

    const text = await metrics.registry.metrics();
    expect(sample(text, 'http_requests_total{method="GET",route="/api/v1/things/:thing_id",status="401"}')).toBe(1);
  });

  it('exposes the process metrics', async () => {
    const text = await scrape(metricsApp().app);
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('# TYPE nodejs_heap_size_used_bytes gauge');
  });

  it('keeps the counts of two apps apart', async () => {
    const first = metricsApp();
    const second = metricsApp();
    await first.app.request('/api/v1/things/a');

    expect(sample(await scrape(first.app), 'http_requests_total{method="GET",route="/api/v1/things/:thing_id",status="200"}')).toBe(1);
    expect(sample(await scrape(second.app), 'http_requests_total{method="GET",route="/api/v1/things/:thing_id",status="200"}')).toBeUndefined();
  });
});

describe('sandbox metrics', () => {
  it('records starts, resumes, reconcile passes and errors as the reconciler reports them', async () => {
    const { app, metrics } = metricsApp();
    const sandboxes = createSandboxMetrics(metrics.registry);
    sandboxes.observeStart(3.2);
    sandboxes.observeStart(0.7);
    sandboxes.observeResume(0.3);
    sandboxes.observeReconcile(0.02);
    sandboxes.countReconcileError();
    sandboxes.countReconcileError();

    const text = await scrape(app);
    expect(sample(text, 'sandbox_start_seconds_count')).toBe(2);
    expect(sample(text, 'sandbox_start_seconds_sum')).toBeCloseTo(3.9);
    expect(sample(text, 'sandbox_start_seconds_bucket{le="1"}')).toBe(1);
    expect(sample(text, 'sandbox_resume_seconds_count')).toBe(1);
    expect(sample(text, 'reconcile_duration_seconds_count')).toBe(1);
    expect(sample(text, 'reconcile_errors_total')).toBe(2);
  });

  it('reads the sandboxes by status at each scrape', async () => {
    const { app, metrics } = metricsApp();
    const sandboxes = createSandboxMetrics(metrics.registry);
    expect(await scrape(app)).not.toMatch(/^sandboxes\{/m);

    let counts: Record<string, number> = { RUNNING: 2, PAUSED: 1, STARTING: 0 };
    sandboxes.setStatusCounts(async () => counts);
    let text = await scrape(app);
    expect(sample(text, 'sandboxes{status="RUNNING"}')).toBe(2);
    expect(sample(text, 'sandboxes{status="PAUSED"}')).toBe(1);
    expect(sample(text, 'sandboxes{status="STARTING"}')).toBe(0);

    counts = { RUNNING: 3 };
    text = await scrape(app);
    expect(sample(text, 'sandboxes{status="RUNNING"}')).toBe(3);
    expect(sample(text, 'sandboxes{status="PAUSED"}')).toBeUndefined();
  });
});
