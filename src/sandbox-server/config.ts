import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { commaSeparated } from '../http/browser-guard/allowed-hosts.js';
import { parseCidr, SANDBOX_SUBNET_PREFIX } from './runtime/sandbox-network.js';
import { parseAllowEntry } from './runtime/egress.js';
import { parseHostsSetting } from './egress/upstream.js';
import { parseDockerEngines } from './net/engine-address.js';
import { RUNTIME_SETTINGS } from '../contracts/sandbox.js';
import { ConfigError } from '../errors/config-error.js';

// This file must not import the logger: pino reads LOG_LEVEL when it is first imported, and an
// invalid level would crash there with a stack trace instead of the one-line message below.

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const hostList = () =>
  z
    .string()
    .transform(commaSeparated)
    .pipe(z.array(z.string().regex(/^[a-zA-Z0-9.:[\]_-]+$/, 'every entry must be a bare host name, without scheme or port')));
const keyList = () =>
  z
    .string()
    .transform((value) => value.split(',').map((key) => key.trim()).filter((key) => key.length > 0))
    .pipe(z.array(z.string().min(16, 'every key must be at least 16 characters long')));
const originList = () =>
  z
    .string()
    .transform(commaSeparated)
    .pipe(z.array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'every entry must be an origin such as https://ui.example.com')));

/** One environment variable: how it is parsed, its default, and what `--help` says about it. */
interface Variable<T extends z.ZodType> {
  schema: T;
  default?: string;
  help: string;
  /** Never echoed in error messages. */
  secret?: boolean;
}

const variable = <T extends z.ZodType>(v: Variable<T>) => v;

/** Every setting of the control plane. `--help` and the README list exactly these. */
export const CONFIG_VARIABLES = {
  HOST: variable({ schema: z.string().min(1), default: '127.0.0.1', help: 'Address to listen on.' }),
  PORT: variable({ schema: integer(0, 65_535), default: '3000', help: 'Port to listen on (0 picks a free one).' }),
  DATA_DIR: variable({
    schema: z.string().min(1).transform((dir) => resolve(dir)),
    default: './.data',
    help: 'Directory for local state; the embedded PGlite database lives in DATA_DIR/pglite.',
  }),
  DATABASE_URL: variable({
    schema: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
      .optional(),
    help: 'postgres://user:password@host:port/db selects PostgreSQL; unset selects embedded PGlite.',
    secret: true,
  }),
  DATABASE_QUERY_TIMEOUT_SECONDS: variable({
    schema: integer(1, 3600),
    default: '10',
    help: 'PostgreSQL only: a query or transaction not answered within this long fails with 503 and its connections are replaced.',
  }),
  SANDBOX_SERVER_API_KEYS: variable({
    schema: keyList(),
    default: '',
    help: 'Comma-separated API keys clients send as "Authorization: Bearer <key>". Unset with no SANDBOX_SERVER_ADMIN_KEYS turns auth off (loopback HOST only; every local caller is then an admin).',
    secret: true,
  }),
  SANDBOX_SERVER_ADMIN_KEYS: variable({
    schema: keyList(),
    default: '',
    help: 'Comma-separated keys that may also register, change, drain and remove engines and point webhooks at WEBHOOK_ALLOWED_HOSTS; ordinary keys get 403 there. Unset with SANDBOX_SERVER_API_KEYS set: engines come only from DOCKER_ENGINES.',
    secret: true,
  }),
  ALLOWED_HOSTS: variable({
    schema: hostList(),
    default: '',
    help: 'Comma-separated Host names served besides loopback names and addresses (others get 403, against DNS rebinding).',
  }),
  PREVIEW_DOMAIN: variable({
    schema: z
      .string()
      .regex(/^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*$/, 'must be a bare domain name, e.g. preview.example.com')
      .optional(),
    help: 'Domain of preview URLs in host mode: {port}-{sandbox id}.{PREVIEW_DOMAIN} reaches that port of that sandbox at `/`, on its own origin (e.g. localhost on one machine, or a wildcard DNS name pointing here). Unset: path mode only.',
  }),
  PUBLIC_URL: variable({
    schema: z
      .url({ protocol: /^https?$/ })
      .refine((url) => !/[?#]/.test(url), 'must have no query or fragment')
      .transform((url) => url.replace(/\/+$/, ''))
      .optional(),
    help: 'Where clients reach this server (e.g. https://sandboxes.example.com behind a reverse proxy), for the links it hands out: the preview URLs of exposed_urls and GET .../ports, preview links. Unset: each request\'s own scheme and Host.',
  }),
  CORS_ORIGINS: variable({
    schema: originList(),
    default: '',
    help: 'Comma-separated origins (e.g. https://ui.example.com) whose web pages may call the API; unset keeps CORS closed.',
  }),
  MAX_RUNNING_SANDBOXES: variable({
    schema: integer(1),
    default: '10',
    help: 'At most this many sandboxes run; starting one more pauses the least recently used.',
  }),
  SANDBOX_WARM_POOL: variable({
    schema: integer(0, 100),
    default: '2',
    help: 'Ready sandboxes kept for the default spec, so that a start is answered RUNNING at once (0: none, every start is cold). A shared setting: seeds warm_pool_size on the first start (see SHARED_SETTINGS_FROM_ENV).',
  }),
  SHARED_SETTINGS_FROM_ENV: variable({
    schema: z.enum(['true', 'false']).transform((value) => value === 'true'),
    default: 'false',
    help: "true: this start writes its SANDBOX_WARM_POOL, SANDBOX_DEFAULT_* and SANDBOX_RUNTIME into the installation's shared settings, for every replica. Otherwise only the first start on a database writes them; later ones keep what is held (changed with PATCH /api/v1/settings or sandboxctl settings set) and warn where their environment differs.",
  }),
  MAX_WARM_SANDBOXES: variable({
    schema: integer(0, 1000),
    default: '10',
    help: 'At most this many warm-pool sandboxes wait across all specs; they do not count toward MAX_RUNNING_SANDBOXES.',
  }),
  SANDBOX_DEFAULT_MEMORY_MB: variable({
    schema: integer(16),
    default: '2048',
    help: 'Memory limit, in MB, of the default sandbox spec and of every spec created without memory_mb; a sandbox over it is OOM-killed alone. A shared setting (default_memory_mb), like the other SANDBOX_DEFAULT_*.',
  }),
  SANDBOX_DEFAULT_PIDS: variable({
    schema: integer(16),
    default: '512',
    help: 'Process limit of the default sandbox spec and of every spec created without pids_limit: a fork bomb stops there.',
  }),
  SANDBOX_DEFAULT_CPUS: variable({
    schema: z.coerce.number().positive().max(1024),
    default: '1',
    help: 'CPU limit of the default sandbox spec and of every spec created without cpus (fractions allowed, e.g. 0.5).',
  }),
  SANDBOX_DEFAULT_DISK_MB: variable({
    schema: integer(16),
    default: '10240',
    help: "Disk limit, in MB, of a sandbox's writable layer and data volume together, for the default spec and every spec created without disk_mb; a sandbox over it is stopped (ERROR, with the reason).",
  }),
  SANDBOX_DISK_CHECK_SECONDS: variable({
    schema: integer(1, 3600),
    default: '10',
    help: 'How often the disk use of each running sandbox with a disk limit is measured; a sandbox can overshoot its limit by what it writes in this time.',
  }),
  SNAPSHOT_MAX_MB: variable({
    schema: integer(0, 10_485_760),
    default: '10240',
    help: 'A sandbox holding more than this, in MB (writable layer and data volume), is refused a snapshot (422) before anything is copied; 0: no limit.',
  }),
  SPEC_BUILD_CONTEXT_MAX_MB: variable({
    schema: integer(1, 1024),
    default: '64',
    help: "Largest build context a spec made from a Dockerfile may send, in MB unpacked; a larger one is refused (422). POST /api/v1/sandbox-specs takes bodies this large (base64: a third more) whatever MAX_REQUEST_BODY_MB says.",
  }),
  SPEC_BUILD_TIMEOUT_SECONDS: variable({
    schema: integer(1, 86_400),
    default: '1800',
    help: 'A spec image build running longer than this is stopped, and its spec FAILED saying so.',
  }),
  SANDBOX_LOG_MAX_MB: variable({
    schema: integer(1, 10_240),
    default: '10',
    help: "Size, in MB, at which a sandbox container's log file is rotated (Docker's json-file max-size).",
  }),
  SANDBOX_LOG_MAX_FILES: variable({
    schema: integer(1, 100),
    default: '5',
    help: 'Log files kept per sandbox container, the current one included (max-file); older lines are dropped.',
  }),
  SANDBOX_RUNTIME: variable({
    schema: z.enum(RUNTIME_SETTINGS),
    default: 'auto',
    help: 'OCI runtime of specs that name none: runsc (gVisor), runc, or auto (runsc when the engine has it and it passes its self-test at start, else runc with a warning); an explicit runtime that fails its self-test refuses the start. A shared setting (default_runtime).',
  }),
  SANDBOX_NETWORK_POOL: variable({
    schema: z
      .string()
      .refine(
        (value) => (parseCidr(value)?.prefix ?? Infinity) <= SANDBOX_SUBNET_PREFIX,
        `must be an IPv4 block of /${SANDBOX_SUBNET_PREFIX} or larger, e.g. 10.213.0.0/16`,
      ),
    default: '10.213.0.0/16',
    help: `Private IPv4 block the sandboxes' own networks take their /${SANDBOX_SUBNET_PREFIX} subnets from (blocks the host already routes are skipped).`,
  }),
  SANDBOX_INTERNET_ALLOW: variable({
    schema: z
      .string()
      .transform(commaSeparated)
      .transform((entries, ctx) =>
        entries.map((entry) => {
          const cidr = parseAllowEntry(entry);
          if (cidr === undefined) ctx.addIssue({ code: 'custom', message: `"${entry}" is not an IPv4 or IPv6 address or CIDR block` });
          return cidr ?? entry;
        }),
      ),
    default: '',
    help: 'Comma-separated addresses or CIDR blocks (e.g. 10.0.5.0/24) that "internet" sandboxes may reach although they are private, link-local, shared (100.64/10) or ULA, which are refused by default.',
  }),
  SANDBOX_EGRESS_HOSTS: variable({
    schema: z.string().transform((value, ctx) => {
      const hosts = parseHostsSetting(value);
      if (typeof hosts === 'string') ctx.addIssue({ code: 'custom', message: hosts });
      return typeof hosts === 'string' ? {} : hosts;
    }),
    default: '',
    help: 'Comma-separated name=address pairs (e.g. git.corp.example=10.0.5.7) the egress proxy of "allowlist" sandboxes dials without asking DNS; addresses of this machine are allowed here only.',
  }),
  SANDBOX_HOST_ADDRESS: variable({
    schema: z.string().refine((value) => isIP(value) !== 0, 'must be an IP address'),
    default: '127.0.0.1',
    help: 'Where an "allowlist" sandbox\'s host.sandbox.internal:PORT entries lead on the host (127.0.0.1: services listening on loopback).',
  }),
  SANDBOX_EGRESS_CA_FILE: variable({
    schema: z.string().min(1).transform((file) => resolve(file)).optional(),
    help: "A PEM file of CAs the egress proxy trusts besides the public roots when it sends a brokered secret on (a private git server's CA); the server does not start when it cannot read it.",
  }),
  SANDBOX_SPARE_NETWORKS: variable({
    schema: integer(0, 100),
    default: '4',
    help: "Sandbox networks of each access (internet, none, allowlist) made ahead of need once a sandbox of that access was created, so that a cold start does not wait for its network (0: each sandbox's network is made with it).",
  }),
  SANDBOX_BASE_IMAGE: variable({
    schema: z.string().min(1),
    default: 'node:20-bookworm-slim',
    help: 'Base image the agent-server image is built FROM (build arg).',
  }),
  AGENT_SERVER_IMAGE: variable({
    schema: z.string().min(1),
    default: 'sandbox-server/agent-server:local',
    help: 'Tag of the agent-server image; the default sandbox spec runs it. Built on first use when missing.',
  }),
  SANDBOX_SERVER_INSTANCE: variable({
    schema: z
      .string()
      .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/, 'must be 1-63 letters, digits, "_", "." or "-", starting with a letter or digit'),
    default: 'default',
    help: 'Label value that separates control planes sharing one Docker engine.',
  }),
  DOCKER_ENGINES: variable({
    schema: z
      .string()
      .transform((value, ctx) => {
        try {
          return parseDockerEngines(value);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      })
      .optional(),
    help: 'Engines registered (or updated) at start, name=docker_url@advertise_host,... (unix://, tcp://host:port, ssh://); unset with none registered: this machine\'s engine as "local".',
  }),
  DRAIN_IDLE_SECONDS: variable({
    schema: integer(0),
    default: '60',
    help: 'A running sandbox on a draining engine with no request through the control plane for this long is paused, moved and started again on another engine.',
  }),
  DOCKER_TLS_CERT_DIR: variable({
    schema: z.string().min(1).optional(),
    help: 'Directory with ca.pem, cert.pem and key.pem: tcp:// engines are then reached over TLS with them.',
  }),
  RECONCILE_INTERVAL_MS: variable({
    schema: integer(100),
    default: '5000',
    help: 'How often every sandbox is compared with its container, besides requests and Docker events.',
  }),
  ORPHAN_GRACE_SECONDS: variable({
    schema: integer(0),
    default: '60',
    help: 'A labelled container no sandbox claims is removed after this long.',
  }),
  LLM_MODEL: variable({
    schema: z.string().min(1).optional(),
    help: 'Model of app conversations that do not name one (llm_model), e.g. openai/gpt-4o.',
  }),
  LLM_BASE_URL: variable({
    schema: z.url().optional(),
    help: "The LLM endpoint as this host reaches it (agents reach it through the control plane's LLM relay), e.g. http://127.0.0.1:4000/v1; unset: the model's provider's public address.",
  }),
  LLM_API_KEY: variable({
    schema: z.string().min(1).optional(),
    help: 'API key for LLM_BASE_URL, added by the LLM relay to what the agents send; never enters a sandbox, never logged or returned.',
    secret: true,
  }),
  LLM_RELAY_PORT: variable({
    schema: integer(0, 65_535).optional(),
    help: "Port of the LLM relay, on every address of this host but answering sandboxes' networks (and loopback) only; sandboxes reach it at their engine's host-gateway address. Unset: PORT + 1, or a free one when PORT is 0.",
  }),
  SANDBOX_START_TIMEOUT_SECONDS: variable({
    schema: integer(1),
    default: '300',
    help: 'How long a sandbox may run without its agent-server answering before it is ERROR (its last log lines say why); also how long a conversation start waits for its sandbox.',
  }),
  EVENT_RETENTION_DAYS: variable({
    schema: integer(1, 3650),
    default: '7',
    help: 'Lifecycle events (GET /api/v1/events/...) older than this many days are removed.',
  }),
  MAX_REQUEST_BODY_MB: variable({
    schema: integer(1, 1024),
    default: '4',
    help: 'Largest request body accepted on /api (proxied requests excepted: the agent-server applies its own); larger ones get 413.',
  }),
  WEBHOOK_TIMEOUT_SECONDS: variable({
    schema: integer(1, 300),
    default: '10',
    help: 'A webhook receiver that has not answered a delivery after this long has failed the attempt.',
  }),
  WEBHOOK_FIRST_RETRY_SECONDS: variable({
    schema: integer(1, 3600),
    default: '5',
    help: 'Wait before retrying a failed webhook delivery; each later wait doubles, up to an hour, for 24 hours.',
  }),
  WEBHOOK_ALLOWED_HOSTS: variable({
    schema: hostList(),
    default: '',
    help: 'Comma-separated webhook URL hosts (names or addresses, as written in the URL) that may be loopback, private, link-local or this machine; only admin keys may point webhooks at them. Others must resolve to public addresses only.',
  }),
  REGISTRY_AUTH: variable({
    schema: z
      .string()
      .transform((text, ctx) => {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be JSON such as {"registry.example.com": {"username": "...", "password": "..."}}' });
          return z.NEVER;
        }
      })
      .pipe(z.record(z.string().regex(/^[a-zA-Z0-9.-]+(:\d+)?$/, 'every key must be a registry host[:port]'), z.object({ username: z.string().min(1), password: z.string().min(1) }).strict())),
    default: '{}',
    secret: true,
    help: 'Credentials for pulling sandbox images, per registry host: JSON {"host[:port]": {"username": "...", "password": "..."}} (docker.io for Docker Hub). Images an engine lacks are pulled when a sandbox needs them; hosts not listed are pulled without credentials.',
  }),
  MAX_EVENT_STREAMS_PER_KEY: variable({
    schema: integer(1, 100_000),
    default: '100',
    help: 'Lifecycle event streams (SSE and WebSocket) one API key may have open at once; one more gets 429.',
  }),
  LOG_LEVEL: variable({ schema: z.enum(LOG_LEVELS), default: 'info', help: `One of ${LOG_LEVELS.join(', ')}.` }),
};

type Variables = typeof CONFIG_VARIABLES;
export type SandboxServerConfig = { [K in keyof Variables]: z.output<Variables[K]['schema']> };

/** A setting that cannot be used; `message` is the one line printed before exiting. */
/** Parses the environment once, at start. Empty values count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv): SandboxServerConfig {
  const config: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(CONFIG_VARIABLES) as [string, Variable<z.ZodType>][]) {
    const raw = env[name] === undefined || env[name] === '' ? spec.default : env[name];
    const result = spec.schema.safeParse(raw);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` (entry ${issue.path.join('.')})` : '';
      const shown = spec.secret ? '' : `=${JSON.stringify(raw)}`;
      throw new ConfigError(`invalid ${name}${shown}: ${issue?.message ?? 'invalid value'}${where}`);
    }
    config[name] = result.data;
  }
  const parsed = config as SandboxServerConfig;
  if (parsed.SANDBOX_SERVER_API_KEYS.length + parsed.SANDBOX_SERVER_ADMIN_KEYS.length === 0 && !isLoopbackHost(parsed.HOST)) {
    throw new ConfigError(
      `refusing to listen on HOST=${parsed.HOST} without authentication: set SANDBOX_SERVER_API_KEYS (and SANDBOX_SERVER_ADMIN_KEYS), or listen on a loopback address such as 127.0.0.1`,
    );
  }
  return parsed;
}

/** The LLM relay's port: LLM_RELAY_PORT, else the one after PORT (a free one when PORT picks one). */
export function llmRelayPort(config: Pick<SandboxServerConfig, 'PORT' | 'LLM_RELAY_PORT'>): number {
  if (config.LLM_RELAY_PORT !== undefined) return config.LLM_RELAY_PORT;
  return config.PORT === 0 || config.PORT === 65_535 ? 0 : config.PORT + 1;
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** `sandbox-server resources ...` (installation/resources-command.ts), as `--help` shows it. */
export const RESOURCES_USAGE = [
  '  sandbox-server resources ls                     list what other installations left on the engines',
  "  sandbox-server resources adopt INSTALLATION     make them this installation's: its sweeps then remove those no row claims",
  '  sandbox-server resources rm INSTALLATION --yes  remove them now (without --yes: show what would be removed)',
];

/** The text of `sandbox-server --help`. */
export function configHelp(): string {
  const lines = [
    'Usage: sandbox-server [image build | resources ls|adopt|rm]',
    '',
    '  sandbox-server              run the control plane (HTTP API and reconciler)',
    '  sandbox-server image build  build the agent-server image, then exit',
    '',
    'Resources of other installations (another database or data directory on the same engines),',
    'which this one reports and never removes by itself (docs/operations.md):',
    ...RESOURCES_USAGE,
    '',
    'Environment variables:',
  ];
  const width = Math.max(...Object.keys(CONFIG_VARIABLES).map((name) => name.length));
  for (const [name, spec] of Object.entries(CONFIG_VARIABLES) as [string, Variable<z.ZodType>][]) {
    const fallback = spec.default === undefined ? '' : ` (default: ${spec.default === '' ? 'none' : spec.default})`;
    lines.push(`  ${name.padEnd(width)}  ${spec.help}${fallback}`);
  }
  return `${lines.join('\n')}\n`;
}
