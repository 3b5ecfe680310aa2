import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCaMaterial, LeafIssuer } from '../../src/sandbox-server/broker/certificate-authority.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';
import { sandboxAgent } from './sandbox-agent.js';

const docker = await connectDocker();
const run = promisify(execFile);
const octet = () => 1 + Math.floor(Math.random() * 250);
/** The "remotes": loopback addresses of their own, so each may hold port 443 (where the transparent door sends HTTPS). */
const GIT_REMOTE = `127.68.${octet()}.${octet()}`;
const OTHER_REMOTE = `127.69.${octet()}.${octet()}`;
const GIT_HOST = 'git.brokered.test';
const OTHER_HOST = 'other.brokered.test';

/**
 * A spec's brokered secret in allowlist sandboxes on Docker, under runc and runsc: git clones and
 * pushes over HTTPS with the placeholder, the git server sees the value, another host the
 * placeholder, and the value is nowhere in the sandbox. Every server is on this machine.
 */
describe.runIf(docker)('brokered secrets on Docker', () => {
  const engine = docker as Docker;
  const remoteCa = createCaMaterial('e2e remote CA');
  const value = `real-${randomBytes(12).toString('hex')}`;
  let dir: string;
  let cp: E2eControlPlane;
  let git: GitServer;
  let other: Server;
  const seenByOther: string[] = [];

  beforeAll(async () => {
    dir = await makeTempDir('e2e-brokered-');
    const issuer = new LeafIssuer(remoteCa);
    git = await startGitServer({ username: 'x-access-token', password: value }, { host: GIT_REMOTE, port: 443, tls: issuer.issue(GIT_HOST) });
    await git.addRepository('project', { 'README.md': 'brokered clone\n' });
    const otherLeaf = issuer.issue(OTHER_HOST);
    other = createHttpsServer({ cert: otherLeaf.certPem, key: otherLeaf.keyPem }, (request, response) => {
      seenByOther.push(String(request.headers.authorization));
      response.end('other');
    });
    other.listen(443, OTHER_REMOTE);
    await once(other, 'listening');
    await writeFile(join(dir, 'remote-ca.pem'), remoteCa.certPem);
    await buildE2eImage();
    cp = await startE2eControlPlane({
      SANDBOX_EGRESS_HOSTS: `${GIT_HOST}=${GIT_REMOTE},${OTHER_HOST}=${OTHER_REMOTE}`,
      SANDBOX_EGRESS_CA_FILE: join(dir, 'remote-ca.pem'),
    });
  }, 240_000);

  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
    other?.close();
    await git?.close();
    await removeDir(dir);
  });

  it.each(['runc', 'runsc'] as const)(
    'lets a %s sandbox clone and push with the placeholder, and keeps the value out of it',
    async (runtime) => {
      const spec = {
        id: `brokered-${runtime}-${cp.instanceId}`,
        image: E2E_IMAGE,
        runtime,
        network: 'allowlist',
        egress: { allow: [GIT_HOST, OTHER_HOST], deny: [] },
        initial_env: { GIT_TOKEN: value },
        secret_env: ['GIT_TOKEN'],
        secret_hosts: { GIT_TOKEN: [GIT_HOST] },
      };
      const created = await cp.request('POST', '/api/v1/sandbox-specs', spec, SandboxSpecInfoSchema);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const started = (await cp.request('POST', `/api/v1/sandboxes?sandbox_spec_id=${encodeURIComponent(spec.id)}`, undefined, SandboxInfoSchema)).body;
      const agent = sandboxAgent(cp, await cp.sandboxUntil(started.id, 'RUNNING'));
      // The sandbox's egress rules are written by the gateway's next pass after its container shows up.
      await vi.waitFor(async () => expect((await agent.bash(`getent hosts ${GIT_HOST}`)).exit_code).toBe(0), { timeout: 20_000, interval: 500 });

      const placeholder = (await agent.bash('printf %s "$GIT_TOKEN"')).stdout ?? '';
      expect(placeholder).toMatch(/^sbx_brokered_[A-Za-z0-9_-]{43}$/);
      const before = git.authorizations.length;
      const cloned = await agent.bash(
        `cd /tmp && rm -rf project && git clone -q "https://x-access-token:$GIT_TOKEN@${GIT_HOST}/project.git" && cat project/README.md && cd project && ` +
          `git -c user.name=agent -c user.email=a@b commit -q --allow-empty -m from-${runtime} && git push -q origin main 2>&1 && git log --oneline -1`,
        120,
      );
      expect(cloned.exit_code, `${cloned.stdout} ${cloned.stderr}`).toBe(0);
      expect(cloned.stdout).toContain('brokered clone');
      expect(cloned.stdout).toContain(`from-${runtime}`);
      const real = `Basic ${Buffer.from(`x-access-token:${value}`).toString('base64')}`;
      expect(git.authorizations.slice(before).length).toBeGreaterThan(0);
      expect(git.authorizations.slice(before).filter((header) => header !== real && header !== undefined)).toEqual([]);

      // Another allowed host gets the placeholder as it was sent.
      await agent.upload('/tmp/remote-ca.pem', remoteCa.certPem);
      const toOther = await agent.bash(
        `NODE_EXTRA_CA_CERTS=/tmp/remote-ca.pem node -e "fetch('https://${OTHER_HOST}/', { headers: { authorization: 'Bearer ' + process.env.GIT_TOKEN } }).then(async (r) => console.log(r.status, await r.text()))"`,
      );
      expect(toOther.stdout?.trim()).toBe('200 other');
      expect(seenByOther.at(-1)).toBe(`Bearer ${placeholder}`);

      // The value is in no environment, process, file or output of the sandbox.
      for (const output of [cloned.stdout, cloned.stderr, toOther.stdout, toOther.stderr]) expect(output ?? '').not.toContain(value);
      const [listed] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${started.id}`] } });
      const inspected = await engine.getContainer(listed!.Id).inspect();
      expect(JSON.stringify(inspected.Config.Env)).not.toContain(value);
      // What the search is handed reaches it in halves, joined by a builtin into a pattern file
      // descriptor: on no command line (grep's own would otherwise be found in /proc).
      const search = async (text: string) => {
        const script =
          `a='${text.slice(0, 8)}'; b='${text.slice(8)}'; pattern() { printf '%s%s\\n' "$a" "$b"; }; ` +
          'cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -caF -f <(pattern); ' +
          'grep -rlsF -f <(pattern) / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; true';
        return (await run('docker', ['exec', listed!.Id, 'bash', '-c', script], { maxBuffer: 1 << 20 })).stdout.trim().split('\n');
      };
      expect(await search(value)).toEqual(['0']);
      // The control: the placeholder is found, in a process's environment and in the clone's git config.
      await run('docker', ['exec', '-d', '-e', `CONTROL=${placeholder}`, listed!.Id, 'sleep', '120']);
      const found = await search(placeholder);
      expect(Number(found[0])).toBeGreaterThan(0);
      expect(found).toContain('/tmp/project/.git/config');
    },
    240_000,
  );
});
