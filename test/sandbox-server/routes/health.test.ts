import { describe, expect, it } from 'vitest';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { createSandboxServerApp } from '../../../src/sandbox-server/app.js';
import type { Database } from '../../../src/sandbox-server/db/client.js';
import { recordKicks } from '../harness.js';

describe('/health', () => {
  it('answers 503 when the database does not answer', async () => {
    const unreachable = { execute: () => Promise.reject(new Error('connection refused')) } as unknown as Database;
    const { app } = createSandboxServerApp({ db: unreachable, reconciler: recordKicks(), apiKeys: [], maxRunningSandboxes: 10, events: new EventFeed() });
    const response = await app.request('/health');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ detail: 'Database unavailable' });
    expect(await (await app.request('/alive')).json()).toEqual({ status: 'ok' });
  });
});
