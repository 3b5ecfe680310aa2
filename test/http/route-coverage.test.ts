import { createRoute, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { compareRoutesWithDocument, listAppRoutes, listDocumentedRoutes, toOpenApiPath } from '../helpers/route-coverage.js';
import { openApiDocumentConfig, registerApiDocs } from '../../src/http/docs/index.js';
import { createMetrics, registerMetricsRoute } from '../../src/http/metrics/index.js';
import { createDemoApp, DEMO_ROUTES } from './demo-app.js';

const docs = { title: 'demo', version: '0' };

function documentOf(app: ReturnType<typeof createDemoApp>) {
  return app.getOpenAPI31Document(openApiDocumentConfig(docs));
}

describe('toOpenApiPath', () => {
  it.each([
    ['/api/v1/sandboxes/:sandbox_id/pause', '/api/v1/sandboxes/{sandbox_id}/pause'],
    ['/a/:id{[0-9]+}/b/:name', '/a/{id}/b/{name}'],
    ['/a/:id?', '/a/{id}'],
    ['/alive', '/alive'],
  ])('%s -> %s', (honoPath, openApiPath) => {
    expect(toOpenApiPath(honoPath)).toBe(openApiPath);
  });
});

describe('compareRoutesWithDocument', () => {
  it('finds nothing amiss when every route is documented; docs and metrics routes do not count', () => {
    const app = createDemoApp();
    registerApiDocs(app, docs);
    registerMetricsRoute(app, createMetrics());
    app.use('/api/*', async (_c, next) => next());

    expect(listAppRoutes(app)).toEqual(DEMO_ROUTES);
    expect(listDocumentedRoutes(documentOf(app))).toEqual(DEMO_ROUTES);
    expect(compareRoutesWithDocument(app, documentOf(app))).toEqual({ undocumented: [], unserved: [] });
  });

  it('reports a route the app serves but the document lacks', () => {
    const app = createDemoApp();
    app.get('/api/v1/things/:thing_id/secret-door', (c) => c.json({}));
    const hidden = createRoute({
      method: 'delete',
      path: '/api/v1/things/{thing_id}',
      hide: true,
      request: { params: z.object({ thing_id: z.string() }) },
      responses: { 200: { description: 'Deleted' } },
    });
    app.openapi(hidden, (c) => c.body(null, 200));

    expect(compareRoutesWithDocument(app, documentOf(app))).toEqual({
      undocumented: ['DELETE /api/v1/things/{thing_id}', 'GET /api/v1/things/{thing_id}/secret-door'],
      unserved: [],
    });
  });

  it('reports a documented route the app does not serve', () => {
    const documented = createDemoApp();
    documented.openAPIRegistry.registerPath({
      method: 'post',
      path: '/api/v1/things/{thing_id}/resume',
      responses: { 200: { description: 'Resumed' } },
    });
    const served = createDemoApp();

    expect(compareRoutesWithDocument(served, documentOf(documented))).toEqual({
      undocumented: [],
      unserved: ['POST /api/v1/things/{thing_id}/resume'],
    });
  });

  it('skips the paths it is told to ignore, such as WebSocket routes', () => {
    const app = createDemoApp();
    app.get('/sockets/events/:conversation_id', (c) => c.text('upgrade'));

    expect(compareRoutesWithDocument(app, documentOf(app)).undocumented).toEqual(['GET /sockets/events/{conversation_id}']);
    expect(compareRoutesWithDocument(app, documentOf(app), ['/sockets/*'])).toEqual({ undocumented: [], unserved: [] });
  });
});
