import { OpenAPIHono, createRoute } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventSchema } from '../../src/events/index.js';

describe('EventSchema in OpenAPI', () => {
  it('documents every kind, strict, without made-up default ids or timestamps', () => {
    const app = new OpenAPIHono();
    const schema = z.object({ items: z.array(EventSchema) });
    const route = createRoute({
      method: 'get',
      path: '/events',
      responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } },
    });
    app.openapi(route, (c) => c.json({ items: [] }, 200));

    const document = app.getOpenAPIDocument({ openapi: '3.0.0', info: { title: 'events', version: '0' } });
    const items = JSON.parse(JSON.stringify(document.paths['/events']?.get?.responses?.['200'])) as {
      content: { 'application/json': { schema: { properties: { items: { items: { oneOf: unknown[] } } } } } };
    };
    const kinds = items.content['application/json'].schema.properties.items.items.oneOf;
    expect(kinds).toHaveLength(14);
    for (const kind of kinds) {
      expect(kind).toMatchObject({ additionalProperties: false, properties: { id: { type: 'string' } } });
      expect(kind).not.toHaveProperty('properties.id.default');
      expect(kind).not.toHaveProperty('properties.timestamp.default');
    }
  });
});
