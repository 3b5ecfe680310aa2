/**
 * startHttpMcpServer as a program: `node mcp-http-server.mjs PORT` serves the test MCP server's
 * tools over Streamable HTTP (/mcp) and SSE (/sse) on 127.0.0.1:PORT until it is killed.
 */
import { startHttpMcpServer } from './mcp-servers.js';

const server = await startHttpMcpServer(Number(process.argv[2]));
process.stdout.write(`${server.url}\n`);
