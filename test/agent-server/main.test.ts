import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ConfigError } from '../../src/errors/config-error.js';
import { parseConfig, sessionKeysFromEnv } from '../../src/agent-server/config.js';
import { sessionKeyDigest } from '../../src/contracts/agent-server/session-key-digest.js';
import { startRequest } from '../helpers/agent-server.js';
import { h2cRequest } from '../helpers/h2c.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const mainFile = fileURLToPath(new URL('../../src/agent-server/main.ts', import.meta.url));

/** The agent-server program as a child process, run from source through tsx. */
function startProgram(args: string[], env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', mainFile, ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
  });
}

async function finish(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** Resolves with the port from the program's "listening" log line. */
async function listeningPort(child: ChildProcessWithoutNullStreams): Promise<number> {
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg === 'agent-server listening' && typeof entry.port === 'number') return entry.port;
  }
  throw new Error('the program ended before listening');
}

describe('agent-server program', () => {
  let dataDir: string;
  let child: ChildProcessWithoutNullStreams | undefined;

  beforeEach(async () => {
    dataDir = await makeTempDir();
  });

  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    child = undefined;
    await removeDir(dataDir);
  });

  it('prints every flag and environment variable with --help and exits 0', async () => {
    const { code, stdout } = await finish(startProgram(['--help']));
    expect(code).toBe(0);
    for (const name of ['--host', '--port', '--data-dir', 'HOST', 'PORT', 'DATA_DIR', 'OH_SESSION_API_KEYS_0', 'SESSION_API_KEY', 'SESSION_API_KEY_SHA256', 'LOG_LEVEL']) {
      expect(stdout).toContain(name);
    }
  });

  it('exits 2 with one line on stderr for an invalid setting', async () => {
    const { code, stderr } = await finish(startProgram(['--port', 'eighty', '--data-dir', dataDir]));
    expect(code).toBe(2);
    expect(stderr).toBe('agent-server: invalid --port / PORT: must be a whole number\n');
  });

  it('exits 2 naming SESSION_API_KEY_SHA256 when it holds something other than a digest', async () => {
    const { code, stderr } = await finish(startProgram(['--host', '0.0.0.0', '--data-dir', dataDir], { SESSION_API_KEY_SHA256: 'the-plain-key' }));
    expect(code).toBe(2);
    expect(stderr).toBe('agent-server: invalid SESSION_API_KEY_SHA256: each entry must be a SHA-256 digest as 64 hex digits\n');
  });

  it('serves HTTP and the event WebSocket with a session key, and stops cleanly on SIGTERM', async () => {
    child = startProgram(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], { OH_SESSION_API_KEYS_0: 'test-key' });
    const port = await listeningPort(child);
    const url = `http://127.0.0.1:${port}`;

    expect((await fetch(`${url}/alive`)).status).toBe(200);
    expect((await fetch(`${url}/api/conversations/count`)).status).toBe(401);
    const created = await fetch(`${url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Session-API-Key': 'test-key' },
      body: JSON.stringify(startRequest()),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    const socket = new WebSocket(`ws://127.0.0.1:${port}/sockets/events/${id}?session_api_key=test-key`);
    const [frame] = (await once(socket, 'message')) as [Buffer];
    expect(JSON.parse(frame.toString())).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state', value: { id } });
    socket.close();
    await once(socket, 'close');

    const exited = finish(child);
    child.kill('SIGTERM');
    const { code, stdout } = await exited;
    expect(code).toBe(0);
    expect(stdout).toContain('agent-server stopped');
  });
});

describe('agent-server program against odd requests', () => {
  let dataDir: string;
  let child: ChildProcessWithoutNullStreams | undefined;
  beforeEach(async () => {
    dataDir = await makeTempDir();
  });
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await removeDir(dataDir);
  });

  it('refuses an upgrade to h2c with 400 on every route, and logs a keyless request with its path cut short', async () => {
    child = startProgram(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], { OH_SESSION_API_KEYS_0: 'test-key' });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const port = await listeningPort(child);
    const url = `http://127.0.0.1:${port}`;
    const refused = { status: 400, body: expect.stringContaining('"detail":"Upgrade to \\"h2c\\" is not supported') };
    expect(await h2cRequest(`${url}/alive`)).toEqual(refused);
    expect(await h2cRequest(`${url}/api/conversations/count`, { headers: { 'X-Session-API-Key': 'test-key' } })).toEqual(refused);
    const post = { method: 'POST', body: JSON.stringify(startRequest()), headers: { 'content-type': 'application/json', 'X-Session-API-Key': 'test-key' } };
    expect(await h2cRequest(`${url}/api/conversations`, post)).toEqual(refused);
    expect(await (await fetch(`${url}/api/conversations/count`, { headers: { 'X-Session-API-Key': 'test-key' } })).json()).toBe(0);

    const long = `/api/${'x'.repeat(12_000)}`;
    expect((await fetch(`${url}${long}`)).status).toBe(401);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as { msg?: string; path?: string; path_length?: number; status?: number });
    expect(lines.filter((line) => line.msg === 'upgrade refused')).toHaveLength(3);
    const refusedLine = lines.find((line) => line.status === 401);
    expect(refusedLine).toMatchObject({ path_length: long.length });
    expect(refusedLine?.path?.length).toBeLessThan(200);
    expect(stdout.length).toBeLessThan(20_000);
  });
});

describe('parseConfig', () => {
  it('uses the defaults, then the environment, then the flags', () => {
    expect(parseConfig([], {})).toEqual({
      help: false,
      config: {
        host: '127.0.0.1',
        port: 8000,
        dataDir: './data',
        maxBodyMb: 64,
        logLevel: 'info',
        sessionKeys: [],
        sessionKeyDigests: [],
        allowedHosts: [],
        corsOrigins: [],
        createAgentUser: false,
      },
    });
    const env = { HOST: '::1', PORT: '9000', DATA_DIR: '/env', LOG_LEVEL: 'debug', MAX_REQUEST_BODY_MB: '8' };
    expect(parseConfig([], env)).toMatchObject({ config: { host: '::1', port: 9000, dataDir: '/env', maxBodyMb: 8, logLevel: 'debug' } });
    expect(parseConfig(['--host', 'localhost', '--port', '0', '--data-dir', '/flag', '--max-body-mb', '2'], env)).toMatchObject({
      config: { host: 'localhost', port: 0, dataDir: '/flag', maxBodyMb: 2 },
    });
    expect(parseConfig(['-h'], {})).toEqual({ help: true });
    expect(parseConfig([], { ALLOWED_HOSTS: 'a.example, b.example', CORS_ORIGINS: 'https://ui.example' })).toMatchObject({
      config: { allowedHosts: ['a.example', 'b.example'], corsOrigins: ['https://ui.example'] },
    });
  });

  it('collects the session keys in order and ignores empty ones', () => {
    const env = { OH_SESSION_API_KEYS_10: 'ten', OH_SESSION_API_KEYS_0: 'zero', OH_SESSION_API_KEYS_2: '', SESSION_API_KEY: 'plain', OTHER: 'x' };
    expect(sessionKeysFromEnv(env)).toEqual(['zero', 'ten', 'plain']);
  });

  it('refuses bad values with a message naming the setting', () => {
    const message = (argv: string[], env: NodeJS.ProcessEnv = {}): string => {
      try {
        parseConfig(argv, env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('expected a ConfigError');
    };
    expect(message(['--port', '70000'])).toBe('invalid --port / PORT: must be at most 65535');
    expect(message([], { PORT: '-1' })).toBe('invalid --port / PORT: must be a whole number');
    expect(message(['--data-dir', ''])).toBe('invalid --data-dir / DATA_DIR: must not be empty');
    expect(message([], { LOG_LEVEL: 'loud' })).toMatch(/^invalid LOG_LEVEL: /);
    expect(message(['--verbose'])).toMatch(/--verbose.*\(see --help\)$/);
    expect(message(['--host', '0.0.0.0'])).toMatch(/^invalid --host \/ HOST: a non-loopback address needs a session API key/);
    expect(parseConfig(['--host', '0.0.0.0'], { SESSION_API_KEY: 'k' })).toMatchObject({ config: { host: '0.0.0.0', sessionKeys: ['k'] } });
    expect(message([], { SESSION_API_KEY_SHA256: `${'a'.repeat(64)},${'b'.repeat(63)}` })).toBe(
      'invalid SESSION_API_KEY_SHA256: each entry must be a SHA-256 digest as 64 hex digits',
    );
    expect(message([], { SESSION_API_KEY_SHA256: 'g'.repeat(64) })).toMatch(/^invalid SESSION_API_KEY_SHA256: /);
    expect(message(['--create-agent-user'])).toBe('invalid --create-agent-user: needs --agent-user (the user to create)');
    expect(parseConfig(['--create-agent-user', '--agent-user', 'openhands'], {})).toMatchObject({ config: { createAgentUser: true, agentUser: 'openhands' } });
  });

  it("takes the data directory's owner from AGENT_SERVER_DATA_OWNER or --data-owner, and refuses one that is no plain name", () => {
    expect(parseConfig([], { AGENT_SERVER_DATA_OWNER: 'sandbox-a' })).toMatchObject({ config: { dataOwner: 'sandbox-a' } });
    expect(parseConfig(['--data-owner', 'sandbox-b'], { AGENT_SERVER_DATA_OWNER: 'sandbox-a' })).toMatchObject({ config: { dataOwner: 'sandbox-b' } });
    expect(() => parseConfig(['--data-owner', 'a/b'], {})).toThrow('invalid --data-owner / AGENT_SERVER_DATA_OWNER: must not contain spaces or slashes');
  });

  it('takes session keys given by their digests, which let it listen beyond loopback', () => {
    const digests = [sessionKeyDigest('one'), sessionKeyDigest('two').toUpperCase()];
    expect(parseConfig(['--host', '0.0.0.0'], { SESSION_API_KEY_SHA256: ` ${digests[0]}, ${digests[1]} ` })).toMatchObject({
      config: { host: '0.0.0.0', sessionKeys: [], sessionKeyDigests: digests },
    });
  });
});
