/**
 * Real MCP servers for tests, written with the official SDK's server side: the same tools over
 * stdio (mcp-stdio-server.ts, run as a child process) and over HTTP on 127.0.0.1 (Streamable HTTP
 * at /mcp, SSE at /sse with its messages at /messages; mcp-http-server.ts as a program).
 *
 * Tools: `echo` (text back), `add` (a + b), `slow` (answers after `ms`), `picture` (an image),
 * `refuse` (an error result), `whoami` (uid, cwd, MCP_TEST_VALUE and pid of the server process),
 * `unlock` (adds the tool `secret`, which announces tools/list_changed) and `exit` (the process
 * ends, as a crashing server would).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A 1x1 PNG. */
export const PIXEL_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export function createTestMcpServer(): McpServer {
  const server = new McpServer({ name: 'test-mcp-server', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  server.registerTool('echo', { description: 'Says the text back', inputSchema: { text: z.string() } }, ({ text: value }) => text(value));
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
    ({ a, b }) => text(String(a + b)),
  );
  server.registerTool('slow', { description: 'Answers after ms milliseconds', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return text(`slept ${ms} ms`);
  });
  server.registerTool('picture', { description: 'Shows a picture' }, () => ({
    content: [
      { type: 'text' as const, text: 'a pixel:' },
      { type: 'image' as const, data: PIXEL_PNG_BASE64, mimeType: 'image/png' },
    ],
  }));
  server.registerTool('refuse', { description: 'Always fails' }, () => ({ ...text('no, never'), isError: true }));
  server.registerTool('whoami', { description: 'Who runs the server' }, () =>
    text(JSON.stringify({ uid: process.getuid?.() ?? null, cwd: process.cwd(), value: process.env.MCP_TEST_VALUE ?? null, pid: process.pid })),
  );
  server.registerTool('unlock', { description: 'Adds the secret tool' }, () => {
    if (!server.isConnected()) return text('not connected');
    // Registering a tool on a connected server announces notifications/tools/list_changed.
    server.registerTool('secret', { description: 'Tells the secret' }, () => text('the secret is 42'));
    return text('unlocked');
  });
  server.registerTool('exit', { description: 'Ends the server process' }, () => {
    setTimeout(() => process.exit(3), 10);
    return text('bye');
  });
  return server;
}

/**
 * The test servers as programs, each bundled into one file in `dir` that `node FILE` runs with
 * nothing beside it (in a sandbox too) and without a TypeScript loader's start-up time: `stdio`
 * speaks over stdin and stdout, `http` (given a port) serves startHttpMcpServer on 127.0.0.1.
 */
export async function bundleMcpServers(dir: string): Promise<{ stdio: string; http: string }> {
  const bundle = async (entry: string) => {
    const outfile = join(dir, entry.replace(/\.ts$/, '.mjs'));
    await build({
      entryPoints: [join(import.meta.dirname, entry)],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      logLevel: 'warning',
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    });
    return outfile;
  };
  const [stdio, http] = await Promise.all([bundle('mcp-stdio-server.ts'), bundle('mcp-http-server.ts')]);
  return { stdio, http };
}

export interface HttpMcpServer {
  /** Streamable HTTP endpoint. */
  url: string;
  /** SSE endpoint. */
  sseUrl: string;
  /** Headers of every request received, in order. */
  requestHeaders: IncomingMessage['headers'][];
  /** MCP sessions open now (Streamable HTTP and SSE). */
  openSessions(): number;
  close(): Promise<void>;
}

/** Serves createTestMcpServer's tools on 127.0.0.1 (`port`, or a free one), a server per session, as an MCP host would. */
export async function startHttpMcpServer(port = 0): Promise<HttpMcpServer> {
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const requestHeaders: IncomingMessage['headers'][] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    requestHeaders.push(req.headers);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/mcp') {
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? streamable.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId !== undefined) return void res.writeHead(404).end('unknown session');
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void streamable.set(id, created),
        });
        created.onclose = () => {
          if (created.sessionId) streamable.delete(created.sessionId);
        };
        await createTestMcpServer().connect(created);
        transport = created;
      }
      return transport.handleRequest(req, res);
    }
    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sse.set(transport.sessionId, transport);
      res.on('close', () => sse.delete(transport.sessionId));
      return createTestMcpServer().connect(transport);
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sse.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) return void res.writeHead(404).end('unknown session');
      return transport.handlePostMessage(req, res);
    }
    res.writeHead(404).end();
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const address = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    sseUrl: `http://127.0.0.1:${address.port}/sse`,
    requestHeaders,
    openSessions: () => streamable.size + sse.size,
    async close() {
      await Promise.all([...streamable.values(), ...sse.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
