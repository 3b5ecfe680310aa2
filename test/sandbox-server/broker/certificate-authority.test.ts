import { X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCaMaterial, LeafIssuer } from '../../../src/sandbox-server/broker/certificate-authority.js';
import { LeafContexts } from '../../../src/sandbox-server/broker/leaf-contexts.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const ca = createCaMaterial('installation-1');
const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map(removeDir)));

describe('the installation CA', () => {
  it('is a CA certificate that signed itself, with its key apart', () => {
    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toContain('sandbox-server egress CA installation-1');
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(ca.certPem).not.toContain('PRIVATE KEY');
    expect(ca.keyPem).toContain('PRIVATE KEY');
  });

  it('issues leaves for a name or an address that verify under it, strictly', async () => {
    const issuer = new LeafIssuer(ca);
    const caCert = new X509Certificate(ca.certPem);
    const dir = await makeTempDir('broker-ca-');
    dirs.push(dir);
    writeFileSync(join(dir, 'ca.pem'), ca.certPem);
    for (const host of ['api.github.com', '127.0.0.9']) {
      const leaf = new X509Certificate(issuer.issue(host).certPem);
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(caCert)).toBe(true);
      expect(leaf.verify(caCert.publicKey)).toBe(true);
      expect(host.includes('github') ? leaf.checkHost(host) : leaf.checkIP(host)).toBe(host);
      writeFileSync(join(dir, 'leaf.pem'), leaf.toString());
      // -x509_strict is what Python 3.13 asks of certificates by default.
      const verified = execFileSync('openssl', ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', join(dir, 'ca.pem'), join(dir, 'leaf.pem')]).toString();
      expect(verified).toContain('OK');
    }
    expect(new X509Certificate(issuer.issue('api.github.com').certPem).checkHost('evil.com')).toBeUndefined();
  });

  it('makes a new CA each time, never the same key', () => {
    expect(createCaMaterial('installation-1').keyPem).not.toBe(ca.keyPem);
  });

  it('caches one context per host, case aside', () => {
    const contexts = new LeafContexts(ca);
    const first = contexts.for('Example.com');
    expect(contexts.for('example.com')).toBe(first);
    expect(contexts.for('other.example.com')).not.toBe(first);
    expect(contexts.size).toBe(2);
  });
});
