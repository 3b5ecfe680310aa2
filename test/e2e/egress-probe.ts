/**
 * What a sandbox tries, as one `node -e` script run in its container: each probe's outcome (an
 * answer's status and body, an address, or the error code), so a test sees every attempt at once.
 */
export type EgressProbe =
  | { kind: 'dns'; name: string }
  /** A GET through HTTP_PROXY (absolute URL). */
  | { kind: 'proxy-get'; url: string }
  /** CONNECT host:port through HTTPS_PROXY, then TLS (checked against `ca`) and a GET. */
  | { kind: 'connect'; host: string; port: number }
  /** A GET without the proxy: only the transparent door can let it through. */
  | { kind: 'direct'; url: string }
  /** A plain TCP connection: what it reads first, or why it failed. */
  | { kind: 'tcp'; host: string; port: number };

export function probeScript(probes: readonly EgressProbe[], ca: string): string {
  return `
const net = require('net'), http = require('http'), https = require('https'), tls = require('tls'), dns = require('dns');
const ca = ${JSON.stringify(ca)};
const PROXY = { host: 'proxy.sandbox.internal', port: 3128 };
const timed = (promise) => Promise.race([promise, new Promise((r) => setTimeout(() => r('timeout'), 5000))]);
const read = (res, done) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => done(res.statusCode + ' ' + b.trim())); };
const fail = (done) => (e) => done(e.code || e.message);
const run = {
  dns: (p) => new Promise((done) => dns.lookup(p.name, { family: 4 }, (e, a) => done(e ? e.code : a))),
  'proxy-get': (p) => new Promise((done) => http.request({ ...PROXY, path: p.url, headers: { host: new URL(p.url).host } }, (res) => read(res, done)).on('error', fail(done)).end()),
  connect: (p) => new Promise((done) => {
    const req = http.request({ ...PROXY, method: 'CONNECT', path: p.host + ':' + p.port });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) return done(String(res.statusCode));
      https.get({ host: p.host, port: p.port, path: '/', headers: { host: p.host }, ca, servername: p.host, createConnection: () => tls.connect({ socket, servername: p.host, ca }) }, (r) => read(r, done)).on('error', fail(done));
    });
    req.on('error', fail(done)).end();
  }),
  direct: (p) => new Promise((done) => (p.url.startsWith('https') ? https : http).get(p.url, { ca }, (res) => read(res, done)).on('error', fail(done))),
  tcp: (p) => new Promise((done) => {
    const s = net.connect(p.port, p.host); let b = '';
    s.on('data', (c) => (b += c)); s.on('end', () => done('read ' + b.trim())); s.on('error', fail(done));
    s.on('connect', () => s.write('GET / HTTP/1.0\\r\\nHost: ' + p.host + '\\r\\n\\r\\n'));
  }),
};
Promise.all(${JSON.stringify(probes)}.map((p) => timed(run[p.kind](p)))).then((r) => console.log(JSON.stringify(r)));
`;
}
