import { describe, expect, it } from 'vitest';
import { compareRoutesWithDocument, type OpenAPIDocument } from '../helpers/route-coverage.js';
import { openTestApp } from '../sandbox-server/harness.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { createAgentServerApp } from '../../src/agent-server/app.js';

/** Every route either server serves is in its /openapi.json, and every documented route is served. */
describe('OpenAPI documents', () => {
  it('describe exactly the control plane routes', async () => {
    const testApp = await openTestApp('pglite');
    try {
      const doc = (await (await testApp.app.request('/openapi.json')).json()) as OpenAPIDocument;
      expect(doc.openapi).toBe('3.1.0');
      const coverage = compareRoutesWithDocument(testApp.app, doc, [
        // WebSocket routes, and the proxy, which is registered for every method at once.
        '/api/v1/app-conversations/{id}/events/socket',
        '/api/v1/events/socket',
        '/api/v1/sandboxes/{id}/agent/*',
        '/api/v1/sandboxes/{id}/ports/*',
        '/api/v1/sandboxes/{id}/port-forward/{port}',
      ]);
      expect(coverage).toEqual({ undocumented: [], unserved: [] });
    } finally {
      await testApp.close();
    }
    // Opening PGlite (a WebAssembly PostgreSQL) takes most of this, and far longer on a loaded machine.
  }, 120_000);

  it('describe exactly the agent-server routes', async () => {
    const dataDir = await makeTempDir('openapi-agent-');
    const server = await createAgentServerApp({ dataDir, sessionKeys: [] });
    try {
      const doc = (await (await server.app.request('/openapi.json')).json()) as OpenAPIDocument;
      expect(compareRoutesWithDocument(server.app, doc, ['/sockets/*', '/api/ports/*', '/api/port-forward/{port}'])).toEqual({ undocumented: [], unserved: [] });
      expect(Object.keys(doc.paths ?? {})).toContain('/api/conversations/{conversation_id}/events/search');
    } finally {
      await server.close();
      await removeDir(dataDir);
    }
  });
});
