import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isValidSessionKey, sessionKeyDigestsOf } from '../../../src/agent-server/auth.js';
import { sessionKeyDigest } from '../../../src/contracts/agent-server/session-key-digest.js';
import { SESSION_KEY_HEADER, startRequest } from '../../helpers/agent-server.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { createAgentServerApp, type AgentServer } from '../../../src/agent-server/app.js';
import { countConversations } from '../../../src/agent-server/services/conversations/count-conversations.js';

let dataDir: string;
let server: AgentServer;

beforeEach(async () => {
  dataDir = await makeTempDir();
  server = await createAgentServerApp({ dataDir, sessionKeys: ['key-zero', 'key-one'] });
});

afterEach(async () => {
  await server.close();
  await removeDir(dataDir);
});

const UNAUTHORIZED = { detail: 'Invalid or missing X-Session-API-Key' };

async function get(path: string, key?: string): Promise<{ status: number; body: unknown }> {
  const response = await server.app.request(path, { headers: key === undefined ? {} : { [SESSION_KEY_HEADER]: key } });
  return { status: response.status, body: await response.json() };
}

describe('session API keys', () => {
  it('answers 401 without a key or with a wrong one, on every route but the open ones', async () => {
    for (const path of ['/api/conversations/search', '/api/conversations/count', '/api/tools/', '/api/llm/providers', '/no/such/route']) {
      expect(await get(path), path).toEqual({ status: 401, body: UNAUTHORIZED });
      expect(await get(path, 'key-two'), path).toEqual({ status: 401, body: UNAUTHORIZED });
      expect(await get(path, ''), path).toEqual({ status: 401, body: UNAUTHORIZED });
    }
    const post = await server.app.request('/api/conversations', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(startRequest()),
    });
    expect(post.status).toBe(401);
    expect(countConversations(server.ctx)).toBe(0);
  });

  it('accepts any configured key', async () => {
    expect((await get('/api/conversations/count', 'key-zero')).status).toBe(200);
    expect(await get('/api/conversations/count', 'key-one')).toEqual({ status: 200, body: 0 });
    const lower = await server.app.request('/server_info', { headers: { 'x-session-api-key': 'key-one' } });
    expect(lower.status).toBe(200);
  });

  it('leaves health, server details and the API description open, as OpenHands does', async () => {
    expect(await get('/alive')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/health')).toEqual({ status: 200, body: 'OK' });
    expect(await get('/ready')).toEqual({ status: 200, body: { status: 'ready' } });
    for (const path of ['/', '/server_info']) {
      const { status, body } = await get(path);
      expect({ status, title: (body as { title?: string }).title }, path).toEqual({ status: 200, title: 'agent-server' });
    }
    expect((await get('/openapi.json')).status).toBe(200);
    const docs = await server.app.request('/docs');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toContain('text/html');
  });

  it('lets a CORS preflight through without a key, but not a plain OPTIONS or any other method', async () => {
    const preflight = await server.app.request('/api/conversations/search', {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:3001', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).not.toBe(401);
    const plain = await server.app.request('/api/conversations/search', { method: 'OPTIONS' });
    expect(plain.status).toBe(401);
  });
});

describe('isValidSessionKey', () => {
  it('matches exactly one of the keys, and anything when no key is configured', () => {
    const accepted = sessionKeyDigestsOf(['a', 'bb']);
    expect(isValidSessionKey(accepted, 'bb')).toBe(true);
    expect(isValidSessionKey(accepted, 'b')).toBe(false);
    expect(isValidSessionKey(accepted, 'bbb')).toBe(false);
    expect(isValidSessionKey(accepted, undefined)).toBe(false);
    expect(isValidSessionKey([], undefined)).toBe(true);
    expect(isValidSessionKey([], 'anything')).toBe(true);
  });

  it('matches a key given only by its digest, in either case of hex digits', () => {
    const accepted = sessionKeyDigestsOf([], [sessionKeyDigest('secret'), sessionKeyDigest('other').toUpperCase()]);
    expect(isValidSessionKey(accepted, 'secret')).toBe(true);
    expect(isValidSessionKey(accepted, 'other')).toBe(true);
    expect(isValidSessionKey(accepted, sessionKeyDigest('secret'))).toBe(false);
    expect(isValidSessionKey(accepted, 'Secret')).toBe(false);
  });
});

describe('session API keys given by their digests', () => {
  it('accepts the key whose digest it holds, beside plain keys, and nothing else', async () => {
    const digestDir = await makeTempDir();
    const byDigest = await createAgentServerApp({ dataDir: digestDir, sessionKeys: ['plain'], sessionKeyDigests: [sessionKeyDigest('hashed-key')] });
    try {
      const count = (key: string) => byDigest.app.request('/api/conversations/count', { headers: { [SESSION_KEY_HEADER]: key } });
      expect((await count('hashed-key')).status).toBe(200);
      expect((await count('plain')).status).toBe(200);
      expect((await count(sessionKeyDigest('hashed-key'))).status).toBe(401);
      expect((await count('other')).status).toBe(401);
    } finally {
      await byDigest.close();
      await removeDir(digestDir);
    }
  });
});
