import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SERVER_OPERATIONS } from '../../src/client/index.js';
import { EventFeed } from '../../src/sandbox-server/lifecycle-events/event-feed.js';
import { createSandboxServerApp } from '../../src/sandbox-server/app.js';
import type { DatabaseHandle } from '../../src/sandbox-server/db/client.js';
import { openTestDatabase } from '../helpers/database.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The client's operation table against the server's own OpenAPI document: drift fails here. */
describe('client operations', () => {
  let handle: DatabaseHandle;
  let documented: string[];

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    const { app } = createSandboxServerApp({ db: handle.db, reconciler: { kick() {} }, apiKeys: [], maxRunningSandboxes: 1, events: new EventFeed() });
    const document = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'sandbox-server', version: '1' } });
    documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      METHODS.filter((method) => (item as Record<string, unknown>)[method] !== undefined).map((method) => `${method.toUpperCase()} ${path}`),
    );
  });
  afterAll(() => handle.close());

  const called = Object.values(SANDBOX_SERVER_OPERATIONS).map((operation) => `${operation.method.toUpperCase()} ${operation.path}`);

  it('calls only routes the server documents', () => {
    expect(called.filter((operation) => !documented.includes(operation))).toEqual([]);
  });

  it('covers every /api/v1 route the server documents', () => {
    const apiRoutes = documented.filter((operation) => operation.includes(' /api/v1/'));
    expect(apiRoutes.filter((operation) => !called.includes(operation))).toEqual([]);
  });
});
