/**
 * An MCP tool call's overhead: one `echo` call to the test MCP server (written with the SDK) made
 * by the agent's MCP tool (argument check against the input schema, the call, the observation), beside
 * the same call made directly with the SDK's client over the SDK's own transport, over stdio and
 * over Streamable HTTP on 127.0.0.1. Goal: at most 5 ms added at p50.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { connectMcpTools } from '../src/agent-server/agent/tools/index.js';
import { bundleMcpServers, startHttpMcpServer } from '../test/helpers/mcp-servers.js';
import { formatMs, measure, printTable } from './measure.js';

const RUNS = 500;
const WARMUP = 50;
const TEXT = 'round trip';

export async function runMcp(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-mcp-'));
  const http = await startHttpMcpServer();
  try {
    const { stdio: script } = await bundleMcpServers(dir);
    const rows: string[][] = [];
    const transports = [
      {
        name: 'stdio',
        direct: () => new StdioClientTransport({ command: process.execPath, args: [script], stderr: 'ignore' }),
        config: { command: process.execPath, args: [script] },
      },
      { name: 'Streamable HTTP', direct: () => new StreamableHTTPClientTransport(new URL(http.url)), config: { url: http.url } },
    ];
    for (const transport of transports) {
      const direct = await measureDirect(transport.direct());
      const tool = await measureTool(transport.config, dir);
      rows.push(
        [`SDK client, ${transport.name}`, formatMs(direct.p50), formatMs(direct.p95), ''],
        [`MCP tool, ${transport.name}`, formatMs(tool.p50), formatMs(tool.p95), `${formatMs(tool.p50 - direct.p50)}`],
      );
    }
    console.log(`One MCP tools/call (echo), ${RUNS} runs each after ${WARMUP} warm-up runs; added = tool p50 - SDK p50 (goal <= 5 ms)`);
    printTable(['how', 'p50', 'p95', 'added'], rows);
  } finally {
    await http.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function measureDirect(transport: Transport) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  const once = async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: TEXT } });
    const [first] = result.content as { type: string; text?: string }[];
    if (first?.text !== TEXT) throw new Error(`unexpected result ${JSON.stringify(result)}`);
  };
  try {
    for (let i = 0; i < WARMUP; i++) await once();
    return await measure(RUNS, once);
  } finally {
    await client.close();
  }
}

async function measureTool(server: Record<string, unknown>, workspaceDir: string) {
  const mcp = await connectMcpTools({ mcpServers: { bench: server } }, { workspaceDir, reservedNames: new Set() });
  const tool = mcp.tools.find((candidate) => candidate.name === 'echo');
  if (!tool) throw new Error(`the server did not start: ${mcp.failures.map((f) => f.message).join('; ')}`);
  const once = async () => {
    // The LLM's arguments arrive as JSON text: parsing and checking them is part of the cost.
    const parsed = tool.parseArguments(JSON.stringify({ text: TEXT }));
    if (!parsed.ok) throw new Error(parsed.error);
    const observation = await tool.execute(parsed.action);
    const text = observation.content.map((c) => ('text' in c ? c.text : '')).join('\n');
    if (observation.is_error || !text.endsWith(`\n${TEXT}`)) throw new Error(`unexpected observation ${text}`);
  };
  try {
    for (let i = 0; i < WARMUP; i++) await once();
    return await measure(RUNS, once);
  } finally {
    await mcp.close();
  }
}
