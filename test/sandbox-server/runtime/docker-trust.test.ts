import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createCaMaterial, LeafIssuer } from '../../../src/sandbox-server/broker/certificate-authority.js';
import { createDockerRuntime } from '../../../src/sandbox-server/runtime/index.js';
import { firstRegularFile, TRUST_BUNDLE_FILE, TRUSTED_CA_FILE } from '../../../src/sandbox-server/runtime/docker-trust.js';
import { tarOf } from '../../../src/sandbox-server/runtime/tar.js';
import { connectDocker, containerRequest, removeInstanceResources, testInstanceId } from '../../helpers/docker.js';

const run = promisify(execFile);
const docker = await connectDocker();
const instanceId = testInstanceId();
const ca = createCaMaterial('trust test');
const leaf = new LeafIssuer(ca).issue('localhost');

/** An HTTPS server inside the sandbox with a leaf of the installation CA (as the egress proxy presents), beside /alive. */
const SERVE_BOTH = [
  'node',
  '-e',
  [
    "const { readFileSync } = require('fs');",
    "require('https').createServer({ cert: process.env.LEAF_CERT, key: process.env.LEAF_KEY }, (q, s) => { s.writeHead(404); s.end('trusted'); }).listen(8443, '127.0.0.1');",
    "require('http').createServer((q, s) => { s.writeHead(q.url === '/alive' ? 200 : 404); s.end('{}'); }).listen(8000, '0.0.0.0');",
  ].join(' '),
];

async function sh(containerId: string, line: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('docker', ['exec', containerId, 'bash', '-c', line]);
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

describe('firstRegularFile', () => {
  it('reads the file a docker archive holds and refuses a link', () => {
    expect(firstRegularFile(tarOf([{ path: 'a.crt', mode: 0o644, content: Buffer.from('pem') }]))?.toString()).toBe('pem');
    expect(firstRegularFile(tarOf([{ path: 'dir/', mode: 0o755 }]))).toBeUndefined();
    expect(firstRegularFile(Buffer.alloc(10))).toBeUndefined();
  });
});

describe.skipIf(!docker)('the installation CA in a sandbox', { timeout: 120_000 }, () => {
  const runtime = createDockerRuntime({ instanceId, docker: docker!, trustedCa: ca.certPem });
  afterAll(async () => removeInstanceResources(docker!, instanceId));

  for (const oci of ['runc', 'runsc'] as const) {
    it(`is trusted by git, Node, OpenSSL and the system store, and its key is not there (${oci})`, async () => {
      const created = await runtime.create(containerRequest({ runtime: oci, command: SERVE_BOTH, env: { LEAF_CERT: leaf.certPem, LEAF_KEY: leaf.keyPem } }));
      const id = created.containerId;
      await expect.poll(async () => (await sh(id, 'exec 3<>/dev/tcp/127.0.0.1/8443')).code, { timeout: 20_000 }).toBe(0);

      const env = (await sh(id, 'env')).out;
      for (const line of [`NODE_EXTRA_CA_CERTS=${TRUSTED_CA_FILE}`, `SSL_CERT_FILE=${TRUST_BUNDLE_FILE}`, `REQUESTS_CA_BUNDLE=${TRUST_BUNDLE_FILE}`, `GIT_SSL_CAINFO=${TRUST_BUNDLE_FILE}`]) {
        expect(env).toContain(line);
      }
      // The bundle keeps the public roots (the image's store) beside the CA.
      expect(Number((await sh(id, `grep -c 'BEGIN CERTIFICATE' ${TRUST_BUNDLE_FILE}`)).out.trim())).toBeGreaterThan(100);
      expect((await sh(id, `cat ${TRUSTED_CA_FILE}`)).out).toBe(ca.certPem);

      const node = await sh(id, "node -e \"fetch('https://localhost:8443').then(async (r) => console.log(r.status, await r.text()))\"");
      expect(node.out.trim()).toBe('404 trusted');
      // The control: Node's own roots alone do not know the CA.
      const untrusted = await sh(id, "env -u NODE_EXTRA_CA_CERTS node -e \"fetch('https://localhost:8443').catch((e) => console.log(e.cause.code))\"");
      expect(untrusted.out.trim()).toMatch(/^(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/);
      const openssl = await sh(id, 'openssl s_client -connect 127.0.0.1:8443 -servername localhost -verify_return_error </dev/null 2>&1');
      expect(openssl.out).toContain('Verify return code: 0 (ok)');
      const system = await sh(id, 'env -u SSL_CERT_FILE openssl s_client -connect 127.0.0.1:8443 -servername localhost -CAfile /etc/ssl/certs/ca-certificates.crt -verify_return_error </dev/null 2>&1');
      expect(system.out).toContain('Verify return code: 0 (ok)');
      const git = await sh(id, 'git ls-remote https://localhost:8443/project.git 2>&1');
      expect(git.out).not.toMatch(/certificate|SSL|TLS/i);
      expect(git.out).toMatch(/not found|404/i);
      // Without the variables git (GnuTLS) still trusts it, through the system store.
      const gitSystem = await sh(id, 'env -u GIT_SSL_CAINFO -u SSL_CERT_FILE -u CURL_CA_BUNDLE git ls-remote https://localhost:8443/project.git 2>&1');
      expect(gitSystem.out).not.toMatch(/certificate|SSL|TLS/i);

      expect((await sh(id, `grep -rl 'PRIVATE KEY' /etc /usr/local/share 2>/dev/null`)).out).toBe('');
    });
  }
});
