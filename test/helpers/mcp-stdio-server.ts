/**
 * createTestMcpServer's tools over stdio, as a program: `node --import tsx mcp-stdio-server.ts`.
 * With `--fail` it writes why to stderr and exits before speaking MCP, as a misconfigured server
 * does; with `--silent` it never answers.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createTestMcpServer } from './mcp-servers.js';

if (process.argv.includes('--fail')) {
  process.stderr.write('missing API token: set MCP_TOKEN\n');
  process.exit(2);
} else if (process.argv.includes('--silent')) {
  setInterval(() => undefined, 60_000);
} else {
  await createTestMcpServer().connect(new StdioServerTransport());
}
