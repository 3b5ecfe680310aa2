import { once } from 'node:events';
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../../../src/logger.js';
import { egressRulesOf } from '../../../src/sandbox-server/net/egress-policy.js';
import { type EgressDenial, EgressProxy, type EgressTarget } from '../../../src/sandbox-server/egress/proxy.js';
import { createUpstreamResolver } from '../../../src/sandbox-server/egress/upstream.js';
import { makeTestCertificates, type TestCertificates } from '../../helpers/test-ca.js';

/** A loopback address of its own, so the "remote" servers can hold ports 80 and 443 (the transparent door's) without meeting another test's. */
const REMOTE = `127.66.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

describe('the egress proxy', () => {
  let certs: TestCertificates;
  let proxy: EgressProxy;
  let ports: { port: number; transparentPort: number };
  const servers: Server[] = [];
  const denials: EgressDenial[] = [];
  const intercepted: EgressTarget[] = [];
  let rules = egressRulesOf({ allow: ['allowed.test', '*.wild.test', 'terminated.test'], deny: ['no.wild.test'] });

  beforeAll(async () => {
    certs = await makeTestCertificates(['allowed.test', 'a.wild.test', 'denied.test']);
    const answer = (protocol: string) => (req: { headers: { host?: string }; url?: string }, res: { end: (body: string) => void }) =>
      res.end(`${protocol} ${req.headers.host} ${req.url}`);
    const http = createHttpServer(answer('http'));
    const https = createHttpsServer({ cert: certs.cert, key: certs.key }, answer('https'));
    for (const [server, port] of [[http, 80], [https, 443]] as const) {
      server.listen(port, REMOTE);
      await once(server, 'listening');
      servers.push(server);
    }
    const hosts = Object.fromEntries(['allowed.test', 'denied.test', 'a.wild.test', 'no.wild.test', 'terminated.test'].map((name) => [name, REMOTE]));
    proxy = new EgressProxy({
      identify: (address) => (address === '127.0.0.1' ? { sandboxId: 'sbx-1', rules, gateway: '127.0.0.1' } : undefined),
      resolveUpstream: createUpstreamResolver({ hosts, hostAddress: '127.0.0.1' }),
      onDenied: (denial) => denials.push(denial),
      interceptConnect: (target) =>
        target.host === 'terminated.test'
          ? (client) => {
              intercepted.push(target);
              client.end();
            }
          : undefined,
      log: logger,
    });
    ports = await proxy.listen('127.0.0.1', 0, 0);
  });
  afterAll(async () => {
    await proxy?.close();
    for (const server of servers) server.close();
  });

  /** A forward-proxy GET (absolute URL) through the proxy: status and body. */
  function forward(url: string, via = '127.0.0.1'): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', localAddress: via, port: ports.port, path: url, headers: { host: new URL(url).host } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** CONNECT host:port; the proxy's answer line and, when it let us through, the socket. */
  async function connectVia(target: string): Promise<{ line: string; socket: Socket }> {
    const socket = netConnect(ports.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    return { line: chunk.toString().split('\r\n')[0] ?? '', socket };
  }

  /** An HTTPS GET over `socket`, checking the server's certificate for `servername`. */
  async function httpsOver(socket: Socket, servername: string): Promise<string> {
    const tls = tlsConnect({ socket, servername, ca: certs.ca });
    await once(tls, 'secureConnect');
    tls.write(`GET /secure HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    let text = '';
    for await (const chunk of tls) text += (chunk as Buffer).toString();
    return text;
  }

  it('forwards plain HTTP to an allowed name and refuses a name the policy does not allow, counting it', async () => {
    expect(await forward(`http://allowed.test/hello?x=1`)).toEqual({ status: 200, body: 'http allowed.test /hello?x=1' });
    expect(await forward(`http://a.wild.test/`)).toEqual({ status: 200, body: 'http a.wild.test /' });
    const before = denials.length;
    expect((await forward('http://denied.test/')).status).toBe(403);
    expect((await forward('http://no.wild.test/')).body).toContain('denied by no.wild.test');
    expect(denials.slice(before)).toEqual([
      { sandboxId: 'sbx-1', via: 'proxy', target: 'denied.test:80', reason: 'not in the allow list' },
      { sandboxId: 'sbx-1', via: 'proxy', target: 'no.wild.test:80', reason: 'denied by no.wild.test' },
    ]);
  });

  it('refuses a client that is no sandbox it knows, without counting it against any', async () => {
    const before = denials.length;
    expect((await forward('http://allowed.test/', '127.0.0.2')).status).toBe(403);
    expect(denials.length).toBe(before);
  });

  it('tunnels CONNECT to an allowed name (TLS end to end) and refuses a denied one or a raw address', async () => {
    const allowed = await connectVia('allowed.test:443');
    expect(allowed.line).toBe('HTTP/1.1 200 Connection Established');
    expect(await httpsOver(allowed.socket, 'allowed.test')).toContain('https allowed.test /secure');
    expect((await connectVia('denied.test:443')).line).toBe('HTTP/1.1 403 Forbidden');
    expect((await connectVia(`${REMOTE}:443`)).line).toBe('HTTP/1.1 403 Forbidden');
  });

  it('judges connections caught transparently by their TLS server name or HTTP Host', async () => {
    const tls = netConnect(ports.transparentPort, '127.0.0.1');
    await once(tls, 'connect');
    expect(await httpsOver(tls, 'allowed.test')).toContain('https allowed.test /secure');

    const before = denials.length;
    const denied = tlsConnect({ host: '127.0.0.1', port: ports.transparentPort, servername: 'denied.test', ca: certs.ca });
    const [error] = (await once(denied, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNRESET');
    expect(denials.slice(before)).toEqual([{ sandboxId: 'sbx-1', via: 'proxy', target: 'denied.test:443', reason: 'not in the allow list' }]);

    const plain = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: ports.transparentPort, path: '/caught', headers: { host: 'allowed.test' } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject).end();
    });
    expect(plain).toBe('http allowed.test /caught');
  });

  it('hands an allowed tunnel to the handler interceptConnect picks', async () => {
    const { line } = await connectVia('terminated.test:443');
    expect(line).toBe('HTTP/1.1 200 Connection Established');
    expect(intercepted).toEqual([{ sandboxId: 'sbx-1', host: 'terminated.test', port: 443, address: REMOTE }]);
  });

  it('applies a changed policy to the next connection', async () => {
    rules = egressRulesOf({ allow: ['denied.test'], deny: [] });
    expect((await forward('http://denied.test/now')).status).toBe(200);
    expect((await forward('http://allowed.test/')).status).toBe(403);
    rules = egressRulesOf({ allow: ['allowed.test', '*.wild.test', 'terminated.test'], deny: ['no.wild.test'] });
  });
});
