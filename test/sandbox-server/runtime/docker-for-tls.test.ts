/**
 * A tcp:// engine is reached over TLS with the client certificate of DOCKER_TLS_CERT_DIR, as dockerd
 * started with --tlsverify demands: against a stand-in engine that accepts only clients its CA signed.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerFor } from '../../../src/sandbox-server/runtime/docker-for.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);

/** Writes ca.pem, a server certificate for 127.0.0.1, and a client cert.pem/key.pem signed by the CA into `dir`. */
async function makeCertificates(dir: string): Promise<void> {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=test-ca');
  await writeFile(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  await writeFile(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, subject, ext] of [['server', '/CN=127.0.0.1', 'server.ext'], ['client', '/CN=sandbox-server', 'client.ext']] as const) {
    await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', subject);
    await openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', `${name}-cert.pem`, '-days', '1', '-extfile', ext);
  }
  // The names dockerd's clients use for the client's pair.
  await run('cp', [join(dir, 'client-cert.pem'), join(dir, 'cert.pem')]);
  await run('cp', [join(dir, 'client-key.pem'), join(dir, 'key.pem')]);
}

describe('a tcp:// engine with TLS client certificates', () => {
  let dir: string;
  let engine: Server;
  let url: string;
  /** The subject of each client certificate the stand-in engine saw. */
  const clients: string[] = [];

  beforeAll(async () => {
    dir = await makeTempDir();
    await makeCertificates(dir);
    engine = createServer(
      {
        key: readFileSync(join(dir, 'server-key.pem')),
        cert: readFileSync(join(dir, 'server-cert.pem')),
        ca: readFileSync(join(dir, 'ca.pem')),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (request, response) => {
        const socket = request.socket as TLSSocket;
        clients.push(String(socket.getPeerCertificate().subject?.CN));
        response.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
      },
    );
    await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
    url = `tcp://127.0.0.1:${(engine.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => engine?.close(resolve));
    await removeDir(dir);
  });

  // The stand-in drops a client without a certificate its CA signed, and the client trusts the
  // stand-in's certificate only through ca.pem: an answer proves both directions.
  it('presents the client certificate and checks the engine against ca.pem', async () => {
    expect(String(await dockerFor({ dockerUrl: url }, dir).ping())).toBe('OK');
    expect(clients).toEqual(['sandbox-server']);
  });
});
