import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { handleError } from '../../src/http/errors.js';
import { EventFeed } from '../../src/sandbox-server/lifecycle-events/event-feed.js';
import { createSandboxServerApp } from '../../src/sandbox-server/app.js';
import { apiKeyAuth, apiKeyIdentifier } from '../../src/sandbox-server/auth.js';
import type { Database } from '../../src/sandbox-server/db/client.js';
import { recordKicks } from './harness.js';

const KEYS = ['first-key-0123456789', 'second-key-0123456789'];

/** The middleware in front of a route that only says it was reached. */
function guarded(apiKeys: string[]) {
  const app = new Hono();
  app.onError(handleError);
  app.use('*', apiKeyAuth({ user: apiKeys, admin: [] }));
  app.all('*', (c) => c.json({ reached: true }));
  return app;
}

describe('apiKeyAuth', () => {
  it('answers 401 without a key, with a malformed header, or with a wrong key', async () => {
    const app = guarded(KEYS);
    const cases: [Record<string, string>, string][] = [
      [{}, 'Not authenticated'],
      [{ authorization: KEYS[0] as string }, 'Not authenticated'],
      [{ authorization: `Basic ${KEYS[0]}` }, 'Not authenticated'],
      [{ authorization: 'Bearer' }, 'Not authenticated'],
      [{ 'x-session-api-key': KEYS[0] as string }, 'Not authenticated'],
      [{ authorization: 'Bearer wrong-key-0123456789' }, 'Invalid API key'],
      [{ authorization: `Bearer ${KEYS[0]}x` }, 'Invalid API key'],
      [{ authorization: `Bearer ${(KEYS[0] as string).slice(0, -1)}` }, 'Invalid API key'],
    ];
    for (const [headers, detail] of cases) {
      const response = await app.request('/anything', { method: 'POST', headers });
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(await response.json()).toEqual({ detail });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('accepts every configured key, whatever the case of "Bearer"', async () => {
    const app = guarded(KEYS);
    for (const header of [`Bearer ${KEYS[0]}`, `Bearer ${KEYS[1]}`, `bearer ${KEYS[1]}`]) {
      const response = await app.request('/anything', { headers: { authorization: header } });
      expect(await response.json()).toEqual({ reached: true });
    }
  });

  it('is off when no key is configured', async () => {
    expect(await (await guarded([]).request('/anything')).json()).toEqual({ reached: true });
  });
});

describe('apiKeyIdentifier', () => {
  it('keeps each verdict when headers repeat: the remembered accepted ones and the refused ones alike', () => {
    const identify = apiKeyIdentifier({ user: ['user-key-0123456789'], admin: ['admin-key-0123456789'] });
    for (let round = 0; round < 3; round++) {
      expect(identify('Bearer user-key-0123456789')).toEqual({ role: 'user', keyId: 'user#1' });
      expect(identify('bearer admin-key-0123456789')).toEqual({ role: 'admin', keyId: 'admin#1' });
      expect(identify('Bearer user-key-012345678')).toBe('invalid');
      expect(identify('Bearer user-key-0123456789x')).toBe('invalid');
      expect(identify('Basic user-key-0123456789')).toBe('missing');
      expect(identify(undefined)).toBe('missing');
    }
  });
});

describe('the control plane app', () => {
  // Requests that authentication stops never reach the database.
  const unreachable = { execute: () => Promise.reject(new Error('not used')) } as unknown as Database;
  const { app } = createSandboxServerApp({ db: unreachable, reconciler: recordKicks(), apiKeys: KEYS, maxRunningSandboxes: 10, events: new EventFeed() });

  it('guards every /api route, known or not', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/sandboxes/search'],
      ['GET', '/api/v1/sandboxes?id=x'],
      ['POST', '/api/v1/sandboxes'],
      ['POST', '/api/v1/sandboxes/x/pause'],
      ['DELETE', '/api/v1/sandboxes/x'],
      ['POST', '/api/v1/sandbox-specs'],
      ['GET', '/api/v1/unknown'],
    ] as const) {
      const response = await app.request(path, { method, headers: { authorization: 'Bearer nope-nope-nope-nope' } });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(await response.json()).toEqual({ detail: 'Invalid API key' });
    }
  });

  it('leaves /alive and /openapi.json open', async () => {
    expect(await (await app.request('/alive')).json()).toEqual({ status: 'ok' });
    const doc = await app.request('/openapi.json');
    expect(doc.status).toBe(200);
    const paths = Object.keys(((await doc.json()) as { paths: object }).paths).sort();
    expect(paths).toEqual([
      '/alive',
      '/api/v1/app-conversations',
      '/api/v1/app-conversations/count',
      '/api/v1/app-conversations/search',
      '/api/v1/app-conversations/start-tasks',
      '/api/v1/app-conversations/start-tasks/count',
      '/api/v1/app-conversations/start-tasks/search',
      '/api/v1/app-conversations/{id}',
      '/api/v1/app-conversations/{id}/events',
      '/api/v1/app-conversations/{id}/events/search',
      '/api/v1/conversation/{conversation_id}/events',
      '/api/v1/conversation/{conversation_id}/events/count',
      '/api/v1/conversation/{conversation_id}/events/search',
      '/api/v1/engines',
      '/api/v1/engines/{name}',
      '/api/v1/engines/{name}/cordon',
      '/api/v1/engines/{name}/drain',
      '/api/v1/engines/{name}/uncordon',
      '/api/v1/events/search',
      '/api/v1/events/stream',
      '/api/v1/sandbox-specs',
      '/api/v1/sandbox-specs/search',
      '/api/v1/sandbox-specs/{id}',
      '/api/v1/sandbox-specs/{id}/build-log',
      '/api/v1/sandboxes',
      '/api/v1/sandboxes/search',
      '/api/v1/sandboxes/{id}',
      '/api/v1/sandboxes/{id}/agent/{path}',
      '/api/v1/sandboxes/{id}/egress',
      '/api/v1/sandboxes/{id}/fork',
      '/api/v1/sandboxes/{id}/llm-usage',
      '/api/v1/sandboxes/{id}/pause',
      '/api/v1/sandboxes/{id}/ports',
      '/api/v1/sandboxes/{id}/ports/{port}/token',
      '/api/v1/sandboxes/{id}/ports/{port}/{path}',
      '/api/v1/sandboxes/{id}/preview-tokens',
      '/api/v1/sandboxes/{id}/resume',
      '/api/v1/sandboxes/{id}/snapshots',
      '/api/v1/settings',
      '/api/v1/snapshots',
      '/api/v1/snapshots/search',
      '/api/v1/snapshots/{id}',
      '/api/v1/webhooks',
      '/api/v1/webhooks/{id}',
      '/api/v1/webhooks/{id}/deliveries',
      '/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver',
      '/health',
    ]);
  });
});
