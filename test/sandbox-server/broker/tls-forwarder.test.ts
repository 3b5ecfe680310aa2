import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { connect } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCaMaterial, LeafIssuer } from '../../../src/sandbox-server/broker/certificate-authority.js';
import { LeafContexts } from '../../../src/sandbox-server/broker/leaf-contexts.js';
import { specPlaceholder, type BrokeredSecret } from '../../../src/sandbox-server/broker/brokered-secret.js';
import { createTlsForwarder, type TlsForwarder } from '../../../src/sandbox-server/broker/tls-forwarder.js';
import { logger } from '../../../src/logger.js';
import { startGitServer, type GitServer } from '../../helpers/git-server.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);

// Two "remotes" on loopback addresses of their own, known by names only this test resolves.
const ADDRESSES: Record<string, string> = { 'git.brokered.test': '127.0.0.7', 'other.brokered.test': '127.0.0.8' };
const lookup: LookupFunction = (hostname, options, callback) => {
  const address = ADDRESSES[hostname];
  if (!address) return callback(Object.assign(new Error(`not a test name: ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
  if (options.all) return (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family: 4 }]);
  callback(null, address, 4);
};

const remoteCa = createCaMaterial('test remote CA');
const installationCa = createCaMaterial('test installation');
const token: BrokeredSecret = { name: 'GIT_TOKEN', placeholder: specPlaceholder('session-key', 'GIT_TOKEN'), value: 'real-token-c0ffee', hosts: ['git.brokered.test'] };

let dir: string;
let git: GitServer;
let echo: HttpsServer;
let echoed: { host: string; authorization: string | undefined; custom: string | undefined }[];
let forwarder: TlsForwarder;
let proxy: Server;
let proxyUrl: string;
let caFile: string;

/** The egress proxy's part, standing in until it is plugged in: answer CONNECT, hand the socket over. */
function startConnectProxy(): Promise<Server> {
  const server = createServer((_request, response) => response.writeHead(405).end());
  server.on('connect', (request, socket, head) => {
    const [host = '', port = '443'] = (request.url ?? '').split(':');
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    forwarder.handle(socket, { host, port: Number(port), secrets: [token] }, head);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  dir = await makeTempDir('broker-forwarder-');
  caFile = join(dir, 'installation-ca.pem');
  await writeFile(caFile, installationCa.certPem);
  const remoteLeaf = (host: string) => new LeafIssuer(remoteCa).issue(host);
  git = await startGitServer({ username: 'x-access-token', password: token.value }, { host: ADDRESSES['git.brokered.test'], tls: remoteLeaf('git.brokered.test') });
  echoed = [];
  const echoLeaf = remoteLeaf('other.brokered.test');
  echo = createHttpsServer({ cert: echoLeaf.certPem, key: echoLeaf.keyPem }, (request, response) => {
    echoed.push({ host: String(request.headers.host), authorization: request.headers.authorization, custom: request.headers['x-token'] as string | undefined });
    response.writeHead(200, { 'content-type': 'text/plain' }).end('echo');
  });
  await new Promise<void>((resolve) => echo.listen(0, ADDRESSES['other.brokered.test'], resolve));
  forwarder = createTlsForwarder({ contexts: new LeafContexts(installationCa), upstreamCa: [remoteCa.certPem], lookup, log: logger });
  proxy = await startConnectProxy();
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  forwarder?.close();
  proxy?.closeAllConnections();
  proxy?.close();
  echo?.closeAllConnections();
  echo?.close();
  await git?.close();
  await removeDir(dir);
});

const gitPort = () => new URL(git.url).port;
const echoPort = () => (echo.address() as AddressInfo).port;

async function curl(url: string, ...args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run('curl', ['-sS', '--proxy', proxyUrl, '--noproxy', '', '--cacert', caFile, '-w', '\n%{http_code}', ...args, url], { env: { PATH: process.env.PATH } });
  const lines = stdout.split('\n');
  return { status: Number(lines.pop()), body: lines.join('\n') };
}

describe('the TLS forwarder', () => {
  it('puts the real value in the headers sent to the secret host, verified against its CA', async () => {
    const basic = Buffer.from(`x-access-token:${token.placeholder}`).toString('base64');
    const answer = await curl(`https://git.brokered.test:${gitPort()}/none.git/info/refs?service=git-upload-pack`, '-H', `Authorization: Basic ${basic}`);
    // The git server answers 401 to anything but the real token; a missing repository is a 404.
    expect(answer.status).toBe(404);
    expect(git.authorizations.at(-1)).toBe(`Basic ${Buffer.from(`x-access-token:${token.value}`).toString('base64')}`);
  });

  it('sends the placeholder unchanged to a host the secret is not for', async () => {
    const answer = await curl(`https://other.brokered.test:${echoPort()}/`, '-H', `Authorization: Bearer ${token.placeholder}`, '-H', `X-Token: ${token.placeholder}`);
    expect(answer).toEqual({ status: 200, body: 'echo' });
    expect(echoed.at(-1)).toEqual({ host: `other.brokered.test:${echoPort()}`, authorization: `Bearer ${token.placeholder}`, custom: token.placeholder });
  });

  it('keeps the connection to the host asked for, whatever Host a request inside names', async () => {
    const before = git.authorizations.length;
    const answer = await curl(`https://other.brokered.test:${echoPort()}/`, '-H', `Host: git.brokered.test:${gitPort()}`, '-H', `Authorization: Bearer ${token.placeholder}`);
    expect(answer.status).toBe(200);
    expect(echoed.at(-1)?.authorization).toBe(`Bearer ${token.placeholder}`);
    expect(git.authorizations.length).toBe(before);
  });

  it('answers 502 when the upstream certificate does not verify, sending nothing there', async () => {
    const strict = createTlsForwarder({ contexts: new LeafContexts(installationCa), lookup, log: logger });
    const server = createServer();
    server.on('connect', (request, socket, head) => {
      const [host = '', port = '443'] = (request.url ?? '').split(':');
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      strict.handle(socket, { host, port: Number(port), secrets: [token] }, head);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const before = git.authorizations.length;
    try {
      const { stdout } = await run('curl', ['-sS', '--proxy', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--noproxy', '', '--cacert', caFile, '-w', '\n%{http_code}', `https://git.brokered.test:${gitPort()}/`]);
      expect(stdout).toMatch(/certificate[\s\S]*\n502$/);
      expect(git.authorizations.length).toBe(before);
    } finally {
      strict.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('is not trusted by a client without the installation CA', async () => {
    await expect(run('curl', ['-sS', '--proxy', proxyUrl, '--noproxy', '', `https://git.brokered.test:${gitPort()}/`], { env: { PATH: process.env.PATH, CURL_CA_BUNDLE: '/dev/null' } })).rejects.toThrow(/certificate|SSL/);
  });

  it('drops a client that does not speak TLS', async () => {
    const socket = connect((proxy.address() as AddressInfo).port, '127.0.0.1');
    socket.write(`CONNECT git.brokered.test:${gitPort()} HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n\r\n`);
    await new Promise((resolve) => socket.on('close', resolve).resume());
  });

  it('lets git clone and push over HTTPS with the placeholder as its password', async () => {
    const url = await git.addRepository('project', { 'README.md': 'hello\n' });
    const remote = `https://x-access-token:${token.placeholder}@git.brokered.test:${gitPort()}/project.git`;
    const env = { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', HTTPS_PROXY: proxyUrl, GIT_SSL_CAINFO: caFile, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    expect(url).toContain('/project.git');
    const clone = join(dir, 'clone');
    await run('git', ['clone', '-q', remote, clone], { env });
    expect(await readFile(join(clone, 'README.md'), 'utf8')).toBe('hello\n');
    await writeFile(join(clone, 'CHANGED.md'), 'pushed\n');
    await run('git', ['add', '-A'], { cwd: clone, env });
    await run('git', ['commit', '-qm', 'change'], { cwd: clone, env });
    await run('git', ['push', '-q', 'origin', 'main'], { cwd: clone, env });
    const { stdout } = await run('git', ['ls-remote', remote, 'main'], { env });
    const { stdout: local } = await run('git', ['rev-parse', 'HEAD'], { cwd: clone, env });
    expect(stdout.split('\t')[0]).toBe(local.trim());
    expect(git.authorizations.every((header) => !header.includes(Buffer.from(`x-access-token:${token.placeholder}`).toString('base64')))).toBe(true);
  });
});
