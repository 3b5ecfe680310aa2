import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import packageJson from '../../../package.json' with { type: 'json' };
import { useTestAgentServer } from '../../helpers/agent-server.js';
import { ServerInfoSchema } from '../../../src/contracts/agent-server/server-info.js';

const agent = useTestAgentServer();

/** The part of the OpenAPI document these tests read (loose: the rest of it is kept as sent). */
const OpenApiSchema = z.looseObject({
  paths: z.record(z.string(), z.record(z.string(), z.looseObject({ parameters: z.array(z.looseObject({ name: z.string() })).optional() }))),
});

describe('server details', () => {
  it('answers /alive, /health and /ready', async () => {
    expect(await agent.server.callJson('GET', '/alive')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await agent.server.callJson('GET', '/health')).toEqual({ status: 200, body: 'OK' });
    expect(await agent.server.callJson('GET', '/ready')).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('answers /server_info and / with the version, times in seconds and where the docs are', async () => {
    for (const path of ['/server_info', '/']) {
      const { status, body } = await agent.server.callJson('GET', path, {}, ServerInfoSchema);
      expect(status).toBe(200);
      expect(body).toEqual({
        title: 'agent-server',
        version: packageJson.version,
        uptime: expect.any(Number),
        idle_time: expect.any(Number),
        docs: '/docs',
      });
      expect(body.uptime).toBeGreaterThanOrEqual(0);
      expect(body.idle_time).toBeGreaterThanOrEqual(0);
    }
  });

  it('describes every route in /openapi.json', async () => {
    const { status, body } = await agent.server.callJson('GET', '/openapi.json', {}, OpenApiSchema);
    expect(status).toBe(200);
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining([
        '/api/conversations',
        '/api/conversations/search',
        '/api/conversations/{conversation_id}/events/search',
        '/api/conversations/{conversation_id}/events/import',
        '/server_info',
      ]),
    );
    const search = body.paths['/api/conversations/{conversation_id}/events/search']?.get;
    expect(search?.parameters?.map((p) => p.name).sort()).toEqual(
      ['body', 'conversation_id', 'kind', 'limit', 'page_id', 'sort_order', 'source', 'timestamp__gte', 'timestamp__lt'],
    );
  });

  it('answers unknown routes with FastAPI\'s 404 body', async () => {
    expect(await agent.server.callJson('GET', '/api/nothing')).toEqual({ status: 404, body: { detail: 'Not Found' } });
  });
});
