import { describe, expect, it } from 'vitest';
import { registerApiDocs } from '../../src/http/docs/index.js';
import { createDemoApp } from './demo-app.js';

function docsApp() {
  const app = createDemoApp();
  registerApiDocs(app, { title: 'demo <server>', version: '1.2.3', description: 'A demo API', security: [{ apiKey: [] }] });
  return app;
}

describe('registerApiDocs', () => {
  it('serves an OpenAPI 3.1 document of the routes, built from their zod schemas', async () => {
    const response = await docsApp().request('/openapi.json');
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      info: unknown;
      security: unknown;
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toEqual({ title: 'demo <server>', version: '1.2.3', description: 'A demo API' });
    expect(document.security).toEqual([{ apiKey: [] }]);
    expect(Object.keys(document.paths).sort()).toEqual(['/api/v1/things/{thing_id}', '/api/v1/things/{thing_id}/pause']);
    expect(document.paths['/api/v1/things/{thing_id}']?.get?.parameters).toEqual([
      expect.objectContaining({ name: 'thing_id', in: 'path' }),
    ]);
    expect(document.components.schemas).toHaveProperty('Thing');
  });

  it('serves the reference page, loading only assets from relative URLs of our own', async () => {
    const response = await docsApp().request('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('<title>demo &lt;server&gt; API reference</title>');
    expect(page).toContain('src="docs/assets/swagger-ui-bundle.js"');
    expect(page).toContain('href="docs/assets/swagger-ui.css"');
    expect(page).toContain("url: 'openapi.json'");
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it.each([
    ['swagger-ui-bundle.js', /^text\/javascript/, 'SwaggerUIBundle'],
    ['swagger-ui.css', /^text\/css/, '.swagger-ui'],
  ])('serves the asset %s', async (file, contentType, marker) => {
    const response = await docsApp().request(`/docs/assets/${file}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(contentType);
    expect(await response.text()).toContain(marker);
  });

  it('serves the favicon as an image', async () => {
    const response = await docsApp().request('/docs/assets/favicon-32x32.png');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await response.arrayBuffer()).subarray(1, 4)).toEqual(new TextEncoder().encode('PNG'));
  });

  it.each(['index.html', 'package.json', '..%2Fpackage.json', 'constructor', '__proto__'])(
    'answers 404 for %s, which is not one of the page assets',
    async (file) => {
      const response = await docsApp().request(`/docs/assets/${file}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ detail: 'Not Found' });
    },
  );
});
