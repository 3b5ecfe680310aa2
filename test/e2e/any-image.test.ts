import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { SandboxInfoSchema, SandboxPageSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema, SandboxSpecPageSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { SnapshotInfoSchema } from '../../src/sandbox-server/models/snapshot.js';
import { AGENT_BUNDLE_MOUNT, LABEL_AGENT_BUNDLE } from '../../src/sandbox-server/runtime/agent-bundle.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { tarOf } from '../../src/sandbox-server/runtime/tar.js';
import { ValidationErrorSchema } from '../helpers/answer.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
/** Bookworm with python3 and no node, like python:3.12-slim (../shared/env/more-images.sh). */
const PYTHON_IMAGE = 'sandbox-python:local';
/** One static busybox: no bash, no glibc. */
const BUSYBOX_IMAGE = 'sandbox-busybox:local';
/** PYTHON_IMAGE with an environment and a tool of its own on its PATH: built by this test, removed after. */
const TOOL_IMAGE = `sandbox-server-test/python-tool:${createHash('sha256').update(import.meta.dirname).digest('hex').slice(0, 8)}`;
/** A tag of BUSYBOX_IMAGE this test makes after creating a spec of it (removed after: the tag only). */
const LATER_TAG = { repo: 'sandbox-server-test/busybox-later', tag: createHash('sha256').update(import.meta.dirname).digest('hex').slice(0, 8) };
const LATER_IMAGE = `${LATER_TAG.repo}:${LATER_TAG.tag}`;
const TOOL_DOCKERFILE = `FROM ${PYTHON_IMAGE}
ENV PATH=/opt/tool/bin:$PATH PROJECT_MODE=from-the-image
COPY mytool /opt/tool/bin/mytool
`;

async function imagePresent(engine: Docker, image: string): Promise<boolean> {
  return engine
    .getImage(image)
    .inspect()
    .then(
      () => true,
      () => false,
    );
}

async function buildToolImage(engine: Docker): Promise<void> {
  const context = tarOf([
    { path: 'Dockerfile', mode: 0o644, content: Buffer.from(TOOL_DOCKERFILE) },
    { path: 'mytool', mode: 0o755, content: Buffer.from('#!/bin/sh\necho "mytool ran as $(id -un)"\n') },
  ]);
  const stream = await engine.buildImage(Readable.from([context]), { t: TOOL_IMAGE, rm: true, forcerm: true });
  const events = await new Promise<{ error?: string }[]>((resolve, reject) => engine.modem.followProgress(stream, (error, output: { error?: string }[]) => (error ? reject(error) : resolve(output))));
  const failed = events.find((event) => event.error);
  if (failed) throw new Error(`building ${TOOL_IMAGE}: ${failed.error}`);
}

/**
 * Any image, end to end: a spec of an image with python3 and no node runs the agent-server brought
 * in by the control plane, under runc and runsc; the agent's commands run as a user created for it,
 * in a workspace of its own, with the image's environment and tools; snapshots, forks and warm pools
 * of it work; an image without bash is refused when the spec is created.
 */
describe.runIf(docker)('any image, end to end', () => {
  const engine = docker as Docker;
  let cp: E2eControlPlane;
  let runtimes: string[] = [];

  const agent = (sandboxId: string, path: string) => `/api/v1/sandboxes/${sandboxId}/agent${path}`;
  const bash = async (sandboxId: string, command: string) =>
    (await cp.request('POST', agent(sandboxId, '/api/bash/execute_bash_command'), { command, timeout: 30 }, BashOutputSchema)).body;

  beforeAll(async () => {
    for (const image of [PYTHON_IMAGE, BUSYBOX_IMAGE]) {
      if (!(await imagePresent(engine, image))) throw new Error(`${image} is missing: run ../shared/env/more-images.sh`);
    }
    await Promise.all([buildE2eImage(), buildToolImage(engine)]);
    cp = await startE2eControlPlane();
    runtimes = Object.keys((await engine.info()).Runtimes ?? {}).filter((name) => name === 'runc' || name === 'runsc');
  }, 300_000);
  afterAll(async () => {
    await cp?.close();
    await removeInstanceResources(engine, cp.instanceId);
    await engine.getImage(TOOL_IMAGE).remove({ force: true }).catch(() => undefined);
    await engine.getImage(LATER_IMAGE).remove().catch(() => undefined);
  });

  it.each(['runc', 'runsc'])('runs the agent in an image without node under %s, as a user of its own, with the image environment', async (runtime) => {
    if (!runtimes.includes(runtime)) throw new Error(`the engine lacks ${runtime}`);
    const spec = await cp.request('POST', '/api/v1/sandbox-specs', { id: `tool-${runtime}`, image: TOOL_IMAGE, runtime }, SandboxSpecInfoSchema);
    expect(spec.status).toBe(201);
    const started = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: `tool-${runtime}` }, SandboxInfoSchema);
    const sandbox = await cp.sandboxUntil(started.body.id, 'RUNNING');
    expect(sandbox.agent_server_version).toEqual(expect.any(String));

    expect(await bash(sandbox.id, 'python3 -c "print(6 * 7)"')).toMatchObject({ exit_code: 0, stdout: '42\n' });
    expect(await bash(sandbox.id, 'id -un; pwd; touch made-by-agent && stat -c %U made-by-agent')).toMatchObject({ exit_code: 0, stdout: 'openhands\n/workspace\nopenhands\n' });
    expect(await bash(sandbox.id, 'mytool; echo "$PROJECT_MODE"; echo "$PATH"')).toMatchObject({
      exit_code: 0,
      stdout: 'mytool ran as openhands\nfrom-the-image\n/opt/tool/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n',
    });
    // Nothing of the bundle leaks into the agent's world but the read-only mount.
    expect(await bash(sandbox.id, `command -v node || echo "no node"; env | grep -c LD_ || true; touch ${AGENT_BUNDLE_MOUNT}/x 2>/dev/null || echo refused`)).toMatchObject({
      stdout: 'no node\n0\nrefused\n',
    });
    // The agent cannot read the agent-server's data.
    expect(await bash(sandbox.id, 'ls /data 2>&1 | grep -c "Permission denied"')).toMatchObject({ stdout: '1\n' });

    const [container] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandbox.id}`] } });
    expect(container?.Labels[LABEL_AGENT_BUNDLE]).toBe(sandbox.agent_server_version);
    expect(container?.Mounts.find((mount) => mount.Destination === AGENT_BUNDLE_MOUNT)).toMatchObject({ RW: false });
    expect((await cp.request('DELETE', `/api/v1/sandboxes/${sandbox.id}`)).status).toBe(200);
  });

  it('refuses a spec of an image without bash with a 422 naming why', async () => {
    const refused = await cp.request('POST', '/api/v1/sandbox-specs', { id: 'busybox', image: BUSYBOX_IMAGE }, ValidationErrorSchema);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'image'], msg: expect.stringMatching(/sandbox-busybox:local cannot run the agent: it has no bash/) })]);
    // With a command of its own, the spec runs what it says: nothing is brought in, nothing refused.
    const own = await cp.request('POST', '/api/v1/sandbox-specs', { id: 'busybox-own', image: BUSYBOX_IMAGE, command: ['sleep', '60'] }, SandboxSpecInfoSchema);
    expect(own.status).toBe(201);
  });

  it('turns a sandbox ERROR with the reason when its image, absent when the spec was made, has no bash', async () => {
    const spec = await cp.request('POST', '/api/v1/sandbox-specs', { id: 'busybox-later', image: LATER_IMAGE }, SandboxSpecInfoSchema);
    expect(spec.status).toBe(201);
    await engine.getImage(BUSYBOX_IMAGE).tag(LATER_TAG);
    const started = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'busybox-later' }, SandboxInfoSchema);
    const failed = await cp.sandboxUntil(started.body.id, 'ERROR');
    expect(failed.status_detail).toMatch(/sandbox-server-test\/busybox-later:\w+ cannot run the agent: it has no bash/);
    expect(await engine.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${failed.id}`] } })).toEqual([]);
    await cp.request('DELETE', `/api/v1/sandboxes/${failed.id}`);
  });

  it('keeps a brought-in sandbox through a snapshot and a fork, and serves one from a warm pool', async () => {
    await cp.request('POST', '/api/v1/sandbox-specs', { id: 'python-pool', image: PYTHON_IMAGE, runtime: 'runc', warm_pool_size: 1 }, SandboxSpecInfoSchema);
    await vi.waitFor(
      async () => {
        const spec = (await cp.request('GET', '/api/v1/sandbox-specs/search?limit=100', undefined, SandboxSpecPageSchema)).body.items.find((s) => s.id === 'python-pool');
        expect(spec?.warm_pool_ready).toBe(1);
      },
      { timeout: 90_000, interval: 200 },
    );
    const claimed = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'python-pool' }, SandboxInfoSchema);
    expect(claimed.body.status).toBe('RUNNING');
    expect(await bash(claimed.body.id, 'echo kept > notes.txt && python3 --version')).toMatchObject({ exit_code: 0, stdout: expect.stringMatching(/^Python 3/) });

    const forked = await cp.request('POST', `/api/v1/sandboxes/${claimed.body.id}/fork`, {}, SandboxInfoSchema);
    expect(forked.status).toBe(200);
    const fork = await cp.sandboxUntil(forked.body.id, 'RUNNING');
    expect(await bash(fork.id, 'cat notes.txt; id -un; command -v node || echo "no node"')).toMatchObject({ exit_code: 0, stdout: 'kept\nopenhands\nno node\n' });

    const snapshot = await cp.request('POST', `/api/v1/sandboxes/${claimed.body.id}/snapshots`, { name: 'python' }, SnapshotInfoSchema);
    expect(snapshot.status).toBe(201);
    const restored = await cp.request('POST', '/api/v1/sandboxes', { snapshot_id: snapshot.body.id }, SandboxInfoSchema);
    expect(await bash((await cp.sandboxUntil(restored.body.id, 'RUNNING')).id, 'cat notes.txt')).toMatchObject({ stdout: 'kept\n' });

    const listed = (await cp.request('GET', '/api/v1/sandboxes/search?limit=100', undefined, SandboxPageSchema)).body.items;
    for (const sandbox of listed) await cp.request('DELETE', `/api/v1/sandboxes/${sandbox.id}`);
  });
});
