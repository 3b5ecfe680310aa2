import { execFile } from 'node:child_process';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../../../src/logger.js';
import { brokeredIntercept } from '../../../src/sandbox-server/broker/brokered-intercept.js';
import { specPlaceholder, type BrokeredSecret } from '../../../src/sandbox-server/broker/brokered-secret.js';
import { createCaMaterial, LeafIssuer } from '../../../src/sandbox-server/broker/certificate-authority.js';
import { LeafContexts } from '../../../src/sandbox-server/broker/leaf-contexts.js';
import { createTlsForwarder, type TlsForwarder } from '../../../src/sandbox-server/broker/tls-forwarder.js';
import { egressRulesOf } from '../../../src/sandbox-server/net/egress-policy.js';
import { EgressProxy } from '../../../src/sandbox-server/egress/proxy.js';
import { createUpstreamResolver } from '../../../src/sandbox-server/egress/upstream.js';
import { startGitServer, type GitServer } from '../../helpers/git-server.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);
const GIT_HOST = 'git.brokered.test';
const OTHER_HOST = 'other.brokered.test';
const HOSTS = { [GIT_HOST]: '127.0.0.7', [OTHER_HOST]: '127.0.0.8', 'broken.brokered.test': '127.0.0.8' };

/** The egress proxy with the broker plugged in, against two HTTPS "remotes" on loopback with a test CA of their own. */
describe('brokered secrets through the egress proxy', () => {
  const remoteCa = createCaMaterial('test remote CA');
  const installationCa = createCaMaterial('test installation');
  const token: BrokeredSecret = { name: 'GIT_TOKEN', placeholder: specPlaceholder('session-key', 'GIT_TOKEN'), value: 'real-token-7e11a', hosts: [GIT_HOST] };
  let dir: string;
  let git: GitServer;
  let other: HttpsServer;
  const seenByOther: (string | undefined)[] = [];
  let forwarder: TlsForwarder;
  let proxy: EgressProxy;
  let proxyUrl: string;
  let bundle: string;

  beforeAll(async () => {
    dir = await makeTempDir('broker-intercept-');
    const issuer = new LeafIssuer(remoteCa);
    git = await startGitServer({ username: 'x-access-token', password: token.value }, { host: HOSTS[GIT_HOST], tls: issuer.issue(GIT_HOST) });
    const otherLeaf = issuer.issue(OTHER_HOST);
    other = createHttpsServer({ cert: otherLeaf.certPem, key: otherLeaf.keyPem }, (request, response) => {
      seenByOther.push(request.headers.authorization);
      response.end(`issuer-of-this-answer: remote`);
    });
    await new Promise<void>((resolve) => other.listen(0, HOSTS[OTHER_HOST], resolve));
    // What a sandbox trusts: the installation CA (the forwarder's leaves) beside the public roots (here the remotes' CA).
    bundle = join(dir, 'bundle.pem');
    await writeFile(bundle, installationCa.certPem + remoteCa.certPem);
    forwarder = createTlsForwarder({ contexts: new LeafContexts(installationCa), upstreamCa: [remoteCa.certPem], log: logger });
    proxy = new EgressProxy({
      identify: (address) => (address === '127.0.0.1' ? { sandboxId: 'sbx-brokered', rules: egressRulesOf({ allow: ['*.brokered.test'], deny: [] }), gateway: '127.0.0.1' } : undefined),
      resolveUpstream: createUpstreamResolver({ hosts: HOSTS, hostAddress: '127.0.0.1' }),
      onDenied: () => {},
      interceptConnect: brokeredIntercept({
        secretsOf: async (sandboxId) => {
          if (sandboxId !== 'sbx-brokered') return [];
          return [token, { ...token, name: 'BROKEN', placeholder: specPlaceholder('session-key', 'BROKEN'), hosts: ['broken.brokered.test'] }];
        },
        forwarder,
        log: logger,
      }),
      log: logger,
    });
    proxyUrl = `http://127.0.0.1:${(await proxy.listen('127.0.0.1', 0, 0)).port}`;
  });

  afterAll(async () => {
    forwarder?.close();
    await proxy?.close();
    other?.closeAllConnections();
    other?.close();
    await git?.close();
    await removeDir(dir);
  });

  const curl = (url: string, ...args: string[]) =>
    run('curl', ['-sS', '--proxy', proxyUrl, '--noproxy', '', '--cacert', bundle, ...args, url], { env: { PATH: process.env.PATH } });

  it('clones and pushes with git, the placeholder as its password, the git server seeing only the real token', async () => {
    await git.addRepository('project', { 'README.md': 'brokered\n' });
    const port = new URL(git.url).port;
    const remote = `https://x-access-token:${token.placeholder}@${GIT_HOST}:${port}/project.git`;
    const env = { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', HTTPS_PROXY: proxyUrl, GIT_SSL_CAINFO: bundle, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    const clone = join(dir, 'clone');
    await run('git', ['clone', '-q', remote, clone], { env });
    expect(await readFile(join(clone, 'README.md'), 'utf8')).toBe('brokered\n');
    await writeFile(join(clone, 'NEW.md'), 'pushed\n');
    await run('git', ['add', '-A'], { cwd: clone, env });
    await run('git', ['commit', '-qm', 'push through the broker'], { cwd: clone, env });
    await run('git', ['push', '-q', 'origin', 'main'], { cwd: clone, env });
    const real = `Basic ${Buffer.from(`x-access-token:${token.value}`).toString('base64')}`;
    expect(git.authorizations.length).toBeGreaterThan(0);
    expect(git.authorizations.filter((header) => header !== real)).toEqual([]);
  });

  it('leaves the TLS of a host no secret is for end to end, placeholder and all', async () => {
    const { stdout } = await curl(`https://${OTHER_HOST}:${(other.address() as AddressInfo).port}/`, '-H', `Authorization: Bearer ${token.placeholder}`);
    expect(stdout).toContain('issuer-of-this-answer: remote');
    expect(seenByOther.at(-1)).toBe(`Bearer ${token.placeholder}`);
    // Not terminated: a client trusting only the installation CA cannot verify the remote itself.
    await writeFile(join(dir, 'installation-only.pem'), installationCa.certPem);
    await expect(
      run('curl', ['-sS', '--proxy', proxyUrl, '--noproxy', '', '--cacert', join(dir, 'installation-only.pem'), `https://${OTHER_HOST}:${(other.address() as AddressInfo).port}/`]),
    ).rejects.toThrow(/certificate/i);
  });

  it('answers 502 from the forwarder when the secret host does not answer, and the value went nowhere', async () => {
    const before = seenByOther.length;
    const { stdout } = await curl(`https://broken.brokered.test:1/`, '-H', `Authorization: Bearer ${token.placeholder}`, '-w', '\n%{http_code}');
    expect(stdout).toMatch(/\n502$/);
    expect(seenByOther.length).toBe(before);
  });
});
