import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { tarOf } from '../../src/sandbox-server/runtime/tar.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { freePort } from '../helpers/processes.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const REGISTRY_BINARY = '/usr/bin/docker-registry';
const CREDENTIALS = { username: 'puller', password: 'pull-secret-1234' };

interface ProgressEvent {
  error?: string;
}

async function follow(engine: Docker, stream: NodeJS.ReadableStream, what: string): Promise<void> {
  const events = await new Promise<ProgressEvent[]>((resolve, reject) => engine.modem.followProgress(stream, (error, output: ProgressEvent[]) => (error ? reject(error) : resolve(output))));
  const failed = events.find((event) => event.error);
  if (failed) throw new Error(`${what}: ${failed.error}`);
}

/**
 * Pulls from a real registry on this machine: Debian's docker-registry (distribution) with htpasswd
 * auth on 127.0.0.1 (plain HTTP, which the engine allows on loopback), started and stopped by this
 * test. An image pushed there and absent from the engine runs once pulled with REGISTRY_AUTH, its
 * progress shown in status_detail; without credentials, and for an image the registry lacks, the
 * sandbox turns ERROR with the registry's answer.
 */
describe.runIf(docker)('pulling sandbox images from a registry with auth, end to end', () => {
  const engine = docker as Docker;
  let dir: string;
  let registry: ChildProcess | undefined;
  let host: string;
  let image: string;
  let cp: E2eControlPlane;
  let anonymous: E2eControlPlane | undefined;

  beforeAll(async () => {
    if (!existsSync(REGISTRY_BINARY)) throw new Error(`${REGISTRY_BINARY} is missing: apt-get install docker-registry apache2-utils`);
    dir = await makeTempDir('registry-');
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    image = `${host}/team/python-blob:${port}`;
    await mkdir(join(dir, 'storage'));
    await writeFile(join(dir, 'htpasswd'), execFileSync('htpasswd', ['-Bbn', CREDENTIALS.username, CREDENTIALS.password]));
    await writeFile(
      join(dir, 'config.yml'),
      [
        'version: 0.1',
        'log: { level: warn }',
        `storage: { filesystem: { rootdirectory: ${join(dir, 'storage')} } }`,
        `http: { addr: "${host}" }`,
        `auth: { htpasswd: { realm: test-realm, path: ${join(dir, 'htpasswd')} } }`,
        '',
      ].join('\n'),
    );
    registry = spawn(REGISTRY_BINARY, ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
    await vi.waitFor(async () => expect((await fetch(`http://${host}/v2/`)).status).toBe(401), { timeout: 20_000, interval: 100 });

    // An image of its own layer (30 MB that exist nowhere else), pushed, then removed from the engine.
    const context = tarOf([{ path: 'Dockerfile', mode: 0o644, content: Buffer.from('FROM sandbox-python:local\nRUN head -c 31457280 /dev/urandom > /opt/blob\n') }]);
    await follow(engine, await engine.buildImage(Readable.from([context]), { t: image, rm: true, forcerm: true }), `building ${image}`);
    await follow(engine, await engine.getImage(image).push({ authconfig: { ...CREDENTIALS, serveraddress: host } }), `pushing ${image}`);
    await engine.getImage(image).remove();

    await buildE2eImage();
    cp = await startE2eControlPlane({ REGISTRY_AUTH: JSON.stringify({ [host]: CREDENTIALS }), SANDBOX_RUNTIME: 'runc' });
  }, 300_000);

  afterAll(async () => {
    for (const plane of [cp, anonymous]) {
      if (!plane) continue;
      await plane.close();
      await removeInstanceResources(engine, plane.instanceId);
    }
    await engine.getImage(image).remove({ force: true }).catch(() => undefined);
    registry?.kill('SIGTERM');
    await removeDir(dir);
  });

  it('pulls an absent image with the credentials for its registry, showing the progress, and runs it', { timeout: 180_000 }, async () => {
    const spec = await cp.request('POST', '/api/v1/sandbox-specs', { id: 'pulled', image }, SandboxSpecInfoSchema);
    expect(spec.status).toBe(201);
    const started = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'pulled' }, SandboxInfoSchema);
    const details = new Set<string>();
    const running = await vi.waitFor(
      async () => {
        const [sandbox] = (await cp.request('GET', `/api/v1/sandboxes?id=${started.body.id}`, undefined, SandboxInfoSchema.nullable().array())).body;
        if (sandbox?.status_detail) details.add(sandbox.status_detail);
        expect(sandbox?.status).toBe('RUNNING');
        return sandbox!;
      },
      { timeout: 120_000, interval: 20 },
    );
    expect([...details].some((detail) => detail.startsWith(`pulling image ${image}`))).toBe(true);
    const ran = await cp.request('POST', `/api/v1/sandboxes/${running.id}/agent/api/bash/execute_bash_command`, { command: 'stat -c %s /opt/blob && python3 -c "print(1)"', timeout: 30 }, BashOutputSchema);
    expect(ran.body).toMatchObject({ exit_code: 0, stdout: '31457280\n1\n' });
    expect((await engine.getImage(image).inspect()).RepoTags).toContain(image);
  });

  it('turns a sandbox ERROR with the registry answer for an image it lacks, and for a pull without credentials', { timeout: 180_000 }, async () => {
    await cp.request('POST', '/api/v1/sandbox-specs', { id: 'absent', image: `${host}/team/absent:1` }, SandboxSpecInfoSchema);
    const absent = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'absent' }, SandboxInfoSchema);
    const failed = await cp.sandboxUntil(absent.body.id, 'ERROR');
    expect(failed.status_detail).toMatch(new RegExp(`^pulling image ${host}/team/absent:1 failed: .*(not found|unknown)`, 'i'));

    await engine.getImage(image).remove({ force: true });
    anonymous = await startE2eControlPlane({ SANDBOX_RUNTIME: 'runc' });
    await anonymous.request('POST', '/api/v1/sandbox-specs', { id: 'pulled', image }, SandboxSpecInfoSchema);
    const refused = await anonymous.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'pulled' }, SandboxInfoSchema);
    const unauthorized = await anonymous.sandboxUntil(refused.body.id, 'ERROR');
    expect(unauthorized.status_detail).toMatch(new RegExp(`^pulling image ${image} failed: .*(unauthorized|no basic auth credentials)`, 'i'));
  });
});
