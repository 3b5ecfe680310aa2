/**
 * The agent-server's settings: command-line flags over environment variables over defaults, checked
 * once at start. This module must not import the logger: the logger reads LOG_LEVEL as it loads, so
 * main checks LOG_LEVEL here first and only then loads anything that logs.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DATA_OWNER_ENV } from '../contracts/agent-server/data-owner.js';
import { SESSION_KEY_HEADER, SESSION_KEY_QUERY } from '../contracts/agent-server/session-key.js';
import { SESSION_KEY_DIGEST_ENV } from '../contracts/agent-server/session-key-digest.js';
import { ConfigError } from '../errors/config-error.js';
import { commaSeparated } from '../http/browser-guard/allowed-hosts.js';

export const HELP = `Usage: agent-server [options]

Serves the conversations of one sandbox: events, search, and the WebSocket event stream.

Options (each overrides its environment variable):
  --host <address>      Address to listen on. Env HOST. Default 127.0.0.1.
  --port <number>       Port to listen on (0 picks a free one). Env PORT. Default 8000.
  --data-dir <path>     Where conversations and their events are stored. Env DATA_DIR. Default ./data.
  --max-body-mb <n>     Largest request body accepted (uploads and imports included); larger ones
                        get 413. Env MAX_REQUEST_BODY_MB. Default 64.
  --agent-user <name>   Run the agent's commands (terminal tool, /api/bash) and git for /api/git as
                        this user, and give it the files the agent-server writes for it; run as root
                        to use it. Env AGENT_USER.
                        Default: this process's user.
  --create-agent-user   Create the agent user (and its home) when /etc/passwd lacks it, give it the
                        working directory when that is root's and empty, and make the data directory
                        private: what the control plane asks when it brings the agent-server into an
                        image that was not built for it. Needs --agent-user and root.
  --data-owner <id>     Whose data the data directory holds (the control plane passes the sandbox's
                        id), recorded there. Data recorded under another owner is a copy (a fork):
                        its running conversations start paused instead of carrying on.
                        Env ${DATA_OWNER_ENV}. Default: none (a restart always carries on).
  -h, --help            Show this help and exit.

Environment:
  OH_SESSION_API_KEYS_0, OH_SESSION_API_KEYS_1, ...
                        Accepted session API keys (header ${SESSION_KEY_HEADER}; WebSocket query
                        ${SESSION_KEY_QUERY}). When none is set, requests need no key, and the server
                        only listens on a loopback address.
  SESSION_API_KEY       One more accepted session API key.
  SESSION_API_KEY_SHA256
                        Accepted session API keys given only by their SHA-256 (64 hex digits of the
                        key's UTF-8 bytes; several separated by commas), so the key itself need not
                        be on this machine: how the control plane configures a sandbox's server.
  ALLOWED_HOSTS         Comma-separated Host names served besides loopback names and addresses
                        (others get 403, against DNS rebinding).
  CORS_ORIGINS          Comma-separated origins whose web pages may call the API; unset keeps CORS
                        closed and refuses state-changing requests from other sites.
  LOG_LEVEL             fatal, error, warn, info, debug, trace or silent. Default info.
  CHROMIUM_PATH         The Chromium the browser tools start (as the agent user). Default: the first
                        of chromium, chromium-headless-shell, chromium-browser, google-chrome on PATH.
`;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

const ConfigSchema = z
  .object({
    host: z.string().min(1, 'must not be empty'),
    port: z
      .string()
      .regex(/^\d+$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.int().max(65535, 'must be at most 65535')),
    dataDir: z.string().min(1, 'must not be empty'),
    maxBodyMb: z
      .string()
      .regex(/^\d+$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.int().min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000')),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    sessionKeys: z.array(z.string()),
    sessionKeyDigests: z.array(z.string().regex(/^[0-9a-fA-F]{64}$/, 'each entry must be a SHA-256 digest as 64 hex digits')),
    agentUser: z.string().min(1, 'must not be empty').optional(),
    createAgentUser: z.boolean(),
    dataOwner: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').regex(/^[^\s/]+$/, 'must not contain spaces or slashes').optional(),
    allowedHosts: z.array(z.string()),
    corsOrigins: z.array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'every entry must be an origin such as https://ui.example.com')),
  })
  .refine((config) => !config.createAgentUser || config.agentUser !== undefined, {
    path: ['createAgentUser'],
    message: 'needs --agent-user (the user to create)',
  })
  .refine((config) => config.sessionKeys.length > 0 || config.sessionKeyDigests.length > 0 || LOOPBACK_HOSTS.has(config.host), {
    path: ['host'],
    message: `a non-loopback address needs a session API key (set OH_SESSION_API_KEYS_0, SESSION_API_KEY or ${SESSION_KEY_DIGEST_ENV})`,
  });

/**
 * The session API keys the server accepts: OH_SESSION_API_KEYS_0, _1, ... (OpenHands' names) and
 * SESSION_API_KEY. Empty values count as unset. No key at all means no authentication.
 */
export function sessionKeysFromEnv(env: NodeJS.ProcessEnv): string[] {
  const numbered = Object.keys(env)
    .map((name) => /^OH_SESSION_API_KEYS_(\d+)$/.exec(name))
    .filter((match) => match !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((match) => env[match[0]]);
  return [...numbered, env['SESSION_API_KEY']].filter((key): key is string => typeof key === 'string' && key !== '');
}

/** The environment variables that configure session keys, which no process the agent runs may inherit. */
export function isSessionKeySetting(name: string): boolean {
  return name === 'SESSION_API_KEY' || name === SESSION_KEY_DIGEST_ENV || /^OH_SESSION_API_KEYS_\d+$/.test(name);
}

export type AgentServerConfig = z.output<typeof ConfigSchema>;

/** Where each setting comes from, to name it in an error message. */
const SETTING_NAMES: Record<string, string> = {
  host: '--host / HOST',
  port: '--port / PORT',
  dataDir: '--data-dir / DATA_DIR',
  maxBodyMb: '--max-body-mb / MAX_REQUEST_BODY_MB',
  logLevel: 'LOG_LEVEL',
  sessionKeyDigests: SESSION_KEY_DIGEST_ENV,
  agentUser: '--agent-user / AGENT_USER',
  createAgentUser: '--create-agent-user',
  dataOwner: `--data-owner / ${DATA_OWNER_ENV}`,
  corsOrigins: 'CORS_ORIGINS',
};

export type ConfigResult = { help: true } | { help: false; config: AgentServerConfig };

export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ConfigResult {
  let flags;
  try {
    flags = parseArgs({
      args: [...argv],
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        'max-body-mb': { type: 'string' },
        'agent-user': { type: 'string' },
        'create-agent-user': { type: 'boolean' },
        'data-owner': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new ConfigError(`${(error as Error).message} (see --help)`);
  }
  if (flags.help) return { help: true };
  const parsed = ConfigSchema.safeParse({
    host: flags.host ?? env['HOST'] ?? '127.0.0.1',
    port: flags.port ?? env['PORT'] ?? '8000',
    dataDir: flags['data-dir'] ?? env['DATA_DIR'] ?? './data',
    maxBodyMb: flags['max-body-mb'] ?? env['MAX_REQUEST_BODY_MB'] ?? '64',
    logLevel: env['LOG_LEVEL'] ?? 'info',
    sessionKeys: sessionKeysFromEnv(env),
    sessionKeyDigests: commaSeparated(env[SESSION_KEY_DIGEST_ENV]),
    agentUser: flags['agent-user'] ?? env['AGENT_USER'],
    createAgentUser: flags['create-agent-user'] ?? false,
    dataOwner: flags['data-owner'] ?? env[DATA_OWNER_ENV],
    allowedHosts: commaSeparated(env['ALLOWED_HOSTS']),
    corsOrigins: commaSeparated(env['CORS_ORIGINS']),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const setting = String(issue.path[0]);
    throw new ConfigError(`invalid ${SETTING_NAMES[setting] ?? setting}: ${issue.message}`);
  }
  return { help: false, config: parsed.data };
}
