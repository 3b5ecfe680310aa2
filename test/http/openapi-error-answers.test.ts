import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentServerApp, type AgentServer } from '../../src/agent-server/app.js';
import type { OpenAPIDocument } from '../helpers/route-coverage.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { ADMIN_KEY, openTestApp, type TestApp } from '../sandbox-server/harness.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const BODY_LIMIT = 1024;
const SESSION_KEY = 'openapi-walk-session-key-0123456789';

interface Walked {
  operation: string;
  documented: string[];
  open: boolean;
  answers: number[];
}

/**
 * Walks every operation of a server's /openapi.json and provokes the answers shared middleware
 * gives: no key (401), a body over the limit (413), a body of the wrong shape (422). Each answer of
 * those three an operation gives must be one it documents, and an operation the document says is
 * open must not ask for a key.
 */
/** What the walk needs of an app: Hono's request(). */
interface Requestable {
  request(input: string, init?: RequestInit): Response | Promise<Response>;
}

async function walk(app: Requestable, authHeaders: Record<string, string>): Promise<Walked[]> {
  const document = (await (await app.request('/openapi.json')).json()) as OpenAPIDocument;
  const walked: Walked[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      // Placeholders that pass the usual id patterns; a route that finds nothing answers 404.
      const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const send = async (headers: Record<string, string>, body?: string) =>
        (await app.request(url, { method: method.toUpperCase(), headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }, body })).status;
      const answers = [await send({})];
      if (method === 'post' || method === 'put' || method === 'patch') {
        answers.push(await send(authHeaders, JSON.stringify({ padding: 'x'.repeat(BODY_LIMIT * 2) })));
        answers.push(await send(authHeaders, '[[[]]]'));
      }
      const security = operation.security ?? document.security ?? [];
      walked.push({ operation: `${method.toUpperCase()} ${path}`, documented: Object.keys(operation.responses ?? {}), open: security.length === 0, answers });
    }
  }
  return walked;
}

/** The operations that gave 401, 413 or 422 without documenting it, and the open ones that asked for a key. */
function undocumented(walked: Walked[]): string[] {
  return walked.flatMap(({ operation, documented, open, answers }) => [
    ...answers.filter((status) => [401, 413, 422].includes(status) && !documented.includes(String(status))).map((status) => `${operation}: ${status}`),
    ...(open && answers[0] === 401 ? [`${operation}: documented open, answers 401`] : []),
  ]);
}

describe('401, 413 and 422 in the OpenAPI documents', () => {
  let controlPlane: TestApp;
  let agent: AgentServer;
  let dataDir: string;

  beforeAll(async () => {
    controlPlane = await openTestApp('pglite', { maxRequestBodyBytes: BODY_LIMIT });
    dataDir = await makeTempDir('openapi-walk-');
    agent = await createAgentServerApp({ dataDir, sessionKeys: [SESSION_KEY], maxRequestBodyBytes: BODY_LIMIT });
  }, 120_000);
  afterAll(async () => {
    await controlPlane?.close();
    await agent?.close();
    await removeDir(dataDir);
  });

  it("are documented on every control-plane operation that answers them", async () => {
    const walked = await walk(controlPlane.app, { authorization: `Bearer ${ADMIN_KEY}` });
    expect(undocumented(walked)).toEqual([]);
    // The walk provoked what it should: every /api operation asks for a key, every body is limited.
    // Preview URLs check a key, a link or a public port themselves, once the port is known (here 422).
    expect(walked.filter((w) => w.operation.includes(' /api/') && w.answers[0] !== 401 && !w.operation.includes('/ports/{port}/{path}')).map((w) => w.operation)).toEqual([]);
    expect(walked.filter((w) => w.answers.length > 1 && !w.answers.includes(413) && !w.operation.includes('/agent/') && !w.operation.includes('/ports/')).map((w) => w.operation)).toEqual([]);
  }, 120_000);

  it('are documented on every agent-server operation that answers them', async () => {
    const walked = await walk(agent.app, { 'X-Session-API-Key': SESSION_KEY });
    expect(undocumented(walked)).toEqual([]);
    expect(walked.filter((w) => !w.open && w.answers[0] !== 401).map((w) => w.operation)).toEqual([]);
    // Bodies for apps in the sandbox are theirs to limit; an unpacked archive (a cloned repository)
    // is limited by the disk alone.
    const unlimited = (operation: string) => operation.includes(' /api/ports/') || operation === 'POST /api/file/unpack';
    expect(walked.filter((w) => w.answers.length > 1 && !w.answers.includes(413) && !unlimited(w.operation)).map((w) => w.operation)).toEqual([]);
  }, 120_000);
});
