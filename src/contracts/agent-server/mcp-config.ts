/**
 * `agent.mcp_config` in OpenHands' shape: `{"mcpServers": {NAME: server}}`, where a server is either
 * a program spoken to over stdio (`command`, `args`, `env`, `cwd`) or a URL spoken to over SSE or
 * Streamable HTTP (`url`, `headers`, `auth`, `transport`). OpenHands' server fields are all
 * accepted and an unknown one is refused, as its settings model does. `timeout` (seconds) bounds
 * every request to the server, as fastmcp's does: connecting and listing its tools (30 s when
 * unset) and each tool call (300 s when unset). OAuth needs a browser the sandbox does not have,
 * so it is refused up front.
 */
import { z } from 'zod';

const TRANSPORTS = ['stdio', 'sse', 'http', 'streamable-http', 'streamable_http', 'streamableHttp'] as const;

const AuthSchema = z.union([
  z.string().min(1),
  z.discriminatedUnion('strategy', [
    z.strictObject({ strategy: z.literal('none') }),
    z.strictObject({ strategy: z.literal('bearer'), value: z.string().nullish() }),
    z.strictObject({ strategy: z.literal('api_key'), value: z.string().nullish(), header_name: z.string().min(1).nullish() }),
    z.strictObject({ strategy: z.literal('basic'), username: z.string(), password: z.string().nullish() }),
    z.strictObject({ strategy: z.literal('header'), headers: z.record(z.string(), z.string()).default({}) }),
    z.strictObject({ strategy: z.literal('oauth2'), authentication: z.unknown().optional(), state: z.unknown().optional() }),
  ]),
]);

export const McpServerSchema = z
  .strictObject({
    command: z.string().min(1).nullish(),
    args: z.array(z.string()).nullish(),
    env: z.record(z.string(), z.string()).nullish(),
    cwd: z.string().min(1).nullish(),
    url: z.url({ protocol: /^https?$/ }).nullish(),
    headers: z.record(z.string(), z.string()).nullish(),
    transport: z.enum(TRANSPORTS).nullish(),
    type: z.enum(TRANSPORTS).nullish(),
    auth: AuthSchema.nullish(),
    timeout: z.number().positive().nullish(),
    sse_read_timeout: z.number().positive().nullish(),
    keep_alive: z.boolean().nullish(),
    description: z.string().nullish(),
    icon: z.string().nullish(),
  })
  .superRefine((server, ctx) => {
    if (!server.command === !server.url) ctx.addIssue({ code: 'custom', message: 'A server needs either a command (stdio) or a url (SSE, Streamable HTTP), not both' });
    if (typeof server.auth === 'object' && server.auth?.strategy === 'oauth2') {
      ctx.addIssue({ code: 'custom', path: ['auth', 'strategy'], message: 'OAuth MCP servers are not supported: the sandbox has no browser to sign in with' });
    }
    const transport = server.transport ?? server.type;
    if (transport && (transport === 'stdio') !== Boolean(server.command)) {
      ctx.addIssue({ code: 'custom', path: [server.transport ? 'transport' : 'type'], message: `Transport ${transport} does not fit a server with a ${server.command ? 'command' : 'url'}` });
    }
  });
export type McpServerSettings = z.output<typeof McpServerSchema>;

export const McpConfigSchema = z
  .looseObject({ mcpServers: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'Server names are letters, digits, _ . and -'), McpServerSchema).default({}) })
  .nullish();
