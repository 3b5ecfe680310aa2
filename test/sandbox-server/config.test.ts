import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors/config-error.js';
import { CONFIG_VARIABLES, configHelp, isLoopbackHost, loadConfig } from '../../src/sandbox-server/config.js';

describe('loadConfig', () => {
  it('serves one machine by default', () => {
    expect(loadConfig({})).toEqual({
      HOST: '127.0.0.1',
      PORT: 3000,
      DATA_DIR: `${process.cwd()}/.data`,
      EVENT_RETENTION_DAYS: 7,
      WEBHOOK_TIMEOUT_SECONDS: 10,
      WEBHOOK_FIRST_RETRY_SECONDS: 5,
      DATABASE_URL: undefined,
      DATABASE_QUERY_TIMEOUT_SECONDS: 10,
      SANDBOX_SERVER_API_KEYS: [],
      SANDBOX_SERVER_ADMIN_KEYS: [],
      WEBHOOK_ALLOWED_HOSTS: [],
      MAX_EVENT_STREAMS_PER_KEY: 100,
      ALLOWED_HOSTS: [],
      CORS_ORIGINS: [],
      MAX_RUNNING_SANDBOXES: 10,
      SANDBOX_WARM_POOL: 2,
      SHARED_SETTINGS_FROM_ENV: false,
      SNAPSHOT_MAX_MB: 10240,
      MAX_WARM_SANDBOXES: 10,
      SANDBOX_DEFAULT_MEMORY_MB: 2048,
      SANDBOX_DEFAULT_PIDS: 512,
      SANDBOX_DEFAULT_CPUS: 1,
      SANDBOX_DEFAULT_DISK_MB: 10_240,
      SANDBOX_INTERNET_ALLOW: [],
      SANDBOX_EGRESS_HOSTS: {},
      SANDBOX_HOST_ADDRESS: '127.0.0.1',
      SANDBOX_DISK_CHECK_SECONDS: 10,
      SANDBOX_LOG_MAX_MB: 10,
      SANDBOX_LOG_MAX_FILES: 5,
      SANDBOX_RUNTIME: 'auto',
      SANDBOX_NETWORK_POOL: '10.213.0.0/16',
      SANDBOX_SPARE_NETWORKS: 4,
      SANDBOX_BASE_IMAGE: 'node:20-bookworm-slim',
      AGENT_SERVER_IMAGE: 'sandbox-server/agent-server:local',
      SANDBOX_SERVER_INSTANCE: 'default',
      RECONCILE_INTERVAL_MS: 5000,
      REGISTRY_AUTH: {},
      DRAIN_IDLE_SECONDS: 60,
      ORPHAN_GRACE_SECONDS: 60,
      LLM_MODEL: undefined,
      LLM_BASE_URL: undefined,
      LLM_API_KEY: undefined,
      LLM_RELAY_PORT: undefined,
      SANDBOX_START_TIMEOUT_SECONDS: 300,
      SPEC_BUILD_CONTEXT_MAX_MB: 64,
      SPEC_BUILD_TIMEOUT_SECONDS: 1800,
      MAX_REQUEST_BODY_MB: 4,
      LOG_LEVEL: 'info',
    });
  });

  it('reads every variable, splitting and trimming the API keys', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '8080',
      DATA_DIR: '/var/lib/sandbox-server',
      DATABASE_URL: 'postgresql://u:p@db:5432/x',
      SANDBOX_SERVER_API_KEYS: ' key-one-0123456789abcdef , ,key-two-0123456789abcdef',
      MAX_RUNNING_SANDBOXES: '3',
      SANDBOX_BASE_IMAGE: 'sandbox-base:local',
      AGENT_SERVER_IMAGE: 'agent:1',
      SANDBOX_SERVER_INSTANCE: 'ci-42',
      RECONCILE_INTERVAL_MS: '250',
      ORPHAN_GRACE_SECONDS: '0',
      MAX_REQUEST_BODY_MB: '16',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      HOST: '0.0.0.0',
      PORT: 8080,
      DATA_DIR: '/var/lib/sandbox-server',
      SANDBOX_SERVER_API_KEYS: ['key-one-0123456789abcdef', 'key-two-0123456789abcdef'],
      MAX_RUNNING_SANDBOXES: 3,
      SANDBOX_SERVER_INSTANCE: 'ci-42',
      ORPHAN_GRACE_SECONDS: 0,
      MAX_REQUEST_BODY_MB: 16,
      LOG_LEVEL: 'debug',
    });
  });

  it('reads DOCKER_ENGINES as name=docker_url@advertise_host entries', () => {
    expect(loadConfig({ DOCKER_ENGINES: ' main=unix:///var/run/docker.sock@127.0.0.1, far=ssh://ops@host-2:2222@10.0.0.2,tls=tcp://10.0.0.3:2376@10.0.0.3' }).DOCKER_ENGINES).toEqual([
      { name: 'main', dockerUrl: 'unix:///var/run/docker.sock', advertiseHost: '127.0.0.1' },
      { name: 'far', dockerUrl: 'ssh://ops@host-2:2222', advertiseHost: '10.0.0.2' },
      { name: 'tls', dockerUrl: 'tcp://10.0.0.3:2376', advertiseHost: '10.0.0.3' },
    ]);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ PORT: 3000, DATABASE_URL: undefined });
  });

  it('reads SANDBOX_INTERNET_ALLOW as CIDR blocks, a bare address as its own block', () => {
    expect(loadConfig({ SANDBOX_INTERNET_ALLOW: '10.0.5.0/24, 169.254.1.2 ,fd00::/8' }).SANDBOX_INTERNET_ALLOW).toEqual(['10.0.5.0/24', '169.254.1.2/32', 'fd00::/8']);
  });

  it('names the bad setting in one line', () => {
    const cases: [NodeJS.ProcessEnv, string][] = [
      [{ PORT: 'abc' }, 'invalid PORT="abc": Invalid input: expected number, received NaN'],
      [{ PORT: '70000' }, 'invalid PORT="70000": Too big: expected number to be <=65535'],
      [{ MAX_RUNNING_SANDBOXES: '0' }, 'invalid MAX_RUNNING_SANDBOXES="0": Too small: expected number to be >=1'],
      [{ SANDBOX_SERVER_INSTANCE: 'a b' }, 'invalid SANDBOX_SERVER_INSTANCE="a b": must be 1-63 letters, digits, "_", "." or "-", starting with a letter or digit'],
      [{ SANDBOX_NETWORK_POOL: '10.213.0.0/30' }, 'invalid SANDBOX_NETWORK_POOL="10.213.0.0/30": must be an IPv4 block of /29 or larger, e.g. 10.213.0.0/16'],
      [{ DOCKER_ENGINES: 'e1=unix:///e1.sock' }, 'invalid DOCKER_ENGINES="e1=unix:///e1.sock": "e1=unix:///e1.sock" is not name=docker_url@advertise_host'],
      [{ DOCKER_ENGINES: 'E1=unix:///e1.sock@h' }, 'invalid DOCKER_ENGINES="E1=unix:///e1.sock@h": engine name "E1" must be lower-case letters, digits and dashes'],
      [{ DOCKER_ENGINES: 'e1=http://h:1@h' }, 'invalid DOCKER_ENGINES="e1=http://h:1@h": engine e1: "http://h:1" is not a unix://, tcp://host:port or ssh:// URL'],
      [{ DOCKER_ENGINES: 'e1=unix:///a@h,e1=unix:///b@h' }, 'invalid DOCKER_ENGINES="e1=unix:///a@h,e1=unix:///b@h": engine e1 is named twice'],
      [{ DOCKER_ENGINES: 'e1=tcp://127.0.0.1:99999@h' }, 'invalid DOCKER_ENGINES="e1=tcp://127.0.0.1:99999@h": engine e1: docker_url port 99999 is not between 1 and 65535'],
      [{ DOCKER_ENGINES: 'e1=unix:///a@169.254.169.254' }, 'invalid DOCKER_ENGINES="e1=unix:///a@169.254.169.254": engine e1: advertise_host 169.254.169.254 is link-local'],
      [{ SANDBOX_INTERNET_ALLOW: '10.0.0.0/8,example.com' }, 'invalid SANDBOX_INTERNET_ALLOW="10.0.0.0/8,example.com": "example.com" is not an IPv4 or IPv6 address or CIDR block'],
      [{ LOG_LEVEL: 'loud' }, 'invalid LOG_LEVEL="loud": Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"'],
    ];
    for (const [env, message] of cases) expect(() => loadConfig(env)).toThrow(new ConfigError(message));
  });

  it('never echoes secrets', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://user:hunter2@db' })).toThrow(
      new ConfigError('invalid DATABASE_URL: must start with postgres:// or postgresql://'),
    );
    expect(() => loadConfig({ SANDBOX_SERVER_API_KEYS: 'long-enough-key-0123456789,hunter2' })).toThrow(
      new ConfigError('invalid SANDBOX_SERVER_API_KEYS: every key must be at least 16 characters long (entry 1)'),
    );    expect(() => loadConfig({ REGISTRY_AUTH: '{"registry.example.com": {"username": "ci", "password": "hunter2", "extra": 1}}' })).toThrow(/^invalid REGISTRY_AUTH: (?!.*hunter2)/);
    expect(() => loadConfig({ REGISTRY_AUTH: '{hunter2' })).toThrow(/^invalid REGISTRY_AUTH: must be JSON such as/);
    expect(loadConfig({ REGISTRY_AUTH: '{"127.0.0.1:5000": {"username": "ci", "password": "hunter2"}}' }).REGISTRY_AUTH).toEqual({ '127.0.0.1:5000': { username: 'ci', password: 'hunter2' } });
  });

  it('refuses a non-loopback HOST without API keys', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(/refusing to listen on HOST=0.0.0.0 without authentication/);
    // Admin keys alone turn authentication on: only they are accepted then.
    expect(loadConfig({ HOST: '0.0.0.0', SANDBOX_SERVER_ADMIN_KEYS: 'admin-key-0123456789abcdef' }).SANDBOX_SERVER_ADMIN_KEYS).toEqual(['admin-key-0123456789abcdef']);
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1']) expect(loadConfig({ HOST: host }).HOST).toBe(host);
  });

  it('recognises loopback addresses only', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.1', '127.0.0.1.example.com', 'localhost.example.com'].some(isLoopbackHost)).toBe(false);
  });
});

describe('configHelp', () => {
  it('takes PUBLIC_URL as an http(s) URL without its trailing slash, and refuses any other', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://sandboxes.example.com/' }).PUBLIC_URL).toBe('https://sandboxes.example.com');
    expect(loadConfig({ PUBLIC_URL: 'http://gateway.internal/sandbox-server' }).PUBLIC_URL).toBe('http://gateway.internal/sandbox-server');
    for (const url of ['ftp://example.com', 'https://example.com/?a=1', 'example.com']) expect(() => loadConfig({ PUBLIC_URL: url })).toThrow(ConfigError);
  });

  it('lists every variable with its default', () => {
    const help = configHelp();
    for (const name of Object.keys(CONFIG_VARIABLES)) expect(help).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(help).toContain('(default: 127.0.0.1)');
    expect(help).toContain('image build');
  });
});
