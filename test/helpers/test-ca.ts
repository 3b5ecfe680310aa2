import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A CA made for one test, and a server certificate it signed for `names` (DNS names or IP addresses). */
export interface TestCertificates {
  ca: string;
  cert: string;
  key: string;
}

export async function makeTestCertificates(names: readonly string[]): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'test-ca-'));
  try {
    const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
    await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=test-ca');
    const altNames = names.map((name) => (/^[\d.]+$/.test(name) ? `IP:${name}` : `DNS:${name}`)).join(',');
    await writeFile(join(dir, 'server.ext'), `subjectAltName=${altNames}\n`);
    await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'server.csr', '-subj', `/CN=${names[0] ?? 'localhost'}`);
    await openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'cert.pem', '-days', '1', '-extfile', 'server.ext');
    const [ca, cert, key] = await Promise.all(['ca.pem', 'cert.pem', 'key.pem'].map((file) => readFile(join(dir, file), 'utf8')));
    return { ca: ca as string, cert: cert as string, key: key as string };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
