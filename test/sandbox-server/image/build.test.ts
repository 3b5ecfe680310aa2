import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildAgentServerImage, ensureAgentServerImage } from '../../../src/sandbox-server/image/index.js';
import { type ContainerRequest, createDockerRuntime } from '../../../src/sandbox-server/runtime/index.js';
import { LABEL_AGENT_SERVER_VERSION } from '../../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, containerRequest, removeInstanceResources, TEST_BASE_IMAGE, testInstanceId } from '../../helpers/docker.js';

const docker = await connectDocker();
const instanceId = testInstanceId();
const packageRoot = fileURLToPath(new URL('../../../', import.meta.url));
const realBundle = join(packageRoot, 'dist', 'agent-server.js');

/**
 * A stand-in bundle: it checks the flags the image passes, that it runs unprivileged in /workspace
 * and that it can write its data directory, and answers /alive with what it found. It lets the
 * Dockerfile and the build be tested without depending on the real agent-server being built.
 */
const STAND_IN_BUNDLE = `
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
const flag = (name) => process.argv[process.argv.indexOf(name) + 1];
const dataDir = flag('--data-dir');
writeFileSync(dataDir + '/probe', 'ok');
const report = JSON.stringify({ uid: process.getuid(), cwd: process.cwd(), args: process.argv.slice(2) });
createServer((req, res) => res.end(report)).listen(Number(flag('--port')), flag('--host'));
`;

function sandboxRequest(image: string): ContainerRequest {
  return containerRequest({ specId: image, image, command: null, env: { OH_SESSION_API_KEYS_0: 'key' } });
}

async function answer(port: number | undefined, path: string): Promise<Response> {
  return vi.waitFor(() => fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'X-Session-API-Key': 'key' }, signal: AbortSignal.timeout(1_000) }), {
    timeout: 20_000,
    interval: 100,
  });
}

describe.skipIf(!docker)('agent-server image', { timeout: 60_000 }, () => {
  const tags: string[] = [];
  const contexts: string[] = [];
  const runtime = createDockerRuntime({ instanceId, docker: docker! });
  const newTag = () => {
    const tag = `sandbox-server-test/agent-server:${randomBytes(4).toString('hex')}`;
    tags.push(tag);
    return tag;
  };

  afterAll(async () => {
    await removeInstanceResources(docker!, instanceId);
    for (const tag of tags) await docker!.getImage(tag).remove({ force: true }).catch(() => undefined);
    for (const dir of contexts) await rm(dir, { recursive: true, force: true });
  });

  async function standInContext(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'agent-server-image-'));
    contexts.push(dir);
    await mkdir(join(dir, 'dist', 'swagger-ui'), { recursive: true });
    await copyFile(join(packageRoot, 'Dockerfile'), join(dir, 'Dockerfile'));
    await writeFile(join(dir, 'dist', 'agent-server.js'), STAND_IN_BUNDLE);
    for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']) await writeFile(join(dir, 'dist', 'swagger-ui', asset), '');
    await mkdir(join(dir, 'dist', 'node_modules', 'playwright-core'), { recursive: true });
    await writeFile(join(dir, 'dist', 'node_modules', 'playwright-core', 'package.json'), '{"name":"playwright-core"}');
    return dir;
  }

  it('builds offline from the Dockerfile and runs the bundle as root for an unprivileged agent, with its flags and a writable data volume', async () => {
    const contextDir = await standInContext();
    const tag = newTag();
    const lines: string[] = [];

    await buildAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag, contextDir, onProgress: (line) => lines.push(line) });

    expect(lines.some((line) => line.includes('Successfully tagged'))).toBe(true);
    const image = await docker!.getImage(tag).inspect();
    expect(image.Config.ExposedPorts).toEqual({ '8000/tcp': {} });
    expect(image.Config.WorkingDir).toBe('/workspace');
    // Root, so that the agent's commands can run as another user than the agent-server.
    expect(image.Config.User).toBe('');

    const container = await runtime.create(sandboxRequest(tag));
    const report = (await (await answer(container.hostPorts.AGENT_SERVER, '/alive')).json()) as { uid: number };
    // No key file: the control plane gives the session key's digest in the environment instead.
    expect(report).toEqual({
      cwd: '/workspace',
      uid: 0,
      args: ['--host', '0.0.0.0', '--port', '8000', '--data-dir', '/data', '--agent-user', 'openhands'],
    });
  });

  it('leaves a present image alone and builds a missing one', async () => {
    const contextDir = await standInContext();
    const tag = newTag();

    expect(await ensureAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag, contextDir })).toBe('built');
    expect(await ensureAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag, contextDir })).toBe('present');
  });

  it('rebuilds an image it built from other inputs, labelled with the new version, and leaves an image it did not build alone', async () => {
    const contextDir = await standInContext();
    const tag = newTag();
    const versionOf = async (image: string) => (await docker!.getImage(image).inspect()).Config.Labels?.[LABEL_AGENT_SERVER_VERSION];

    expect(await ensureAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag, contextDir })).toBe('built');
    const first = await versionOf(tag);
    expect(first).toMatch(/^0\.0\.0\+[0-9a-f]{12}$/);

    // An upgrade: the control plane now carries another bundle.
    await writeFile(join(contextDir, 'dist', 'agent-server.js'), `${STAND_IN_BUNDLE}\n// upgraded\n`);
    expect(await ensureAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag, contextDir })).toBe('rebuilt');
    const second = await versionOf(tag);
    expect(second).toMatch(/^0\.0\.0\+[0-9a-f]{12}$/);
    expect(second).not.toBe(first);
    expect(await ensureAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag, contextDir })).toBe('present');

    const foreign = newTag();
    const [repo, foreignTag] = foreign.split(':') as [string, string];
    const container = await docker!.createContainer({ Image: TEST_BASE_IMAGE, Cmd: ['true'] });
    await container.commit({ repo, tag: foreignTag });
    await container.remove();
    expect(await ensureAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag: foreign, contextDir })).toBe('present');
    expect(await versionOf(foreign)).toBeUndefined();
  });

  it('fails with the engine message when a build step fails, and asks for a build when the bundle is missing', async () => {
    const contextDir = await standInContext();
    await writeFile(join(contextDir, 'Dockerfile'), 'ARG BASE_IMAGE\nFROM ${BASE_IMAGE} AS agent-server\nRUN echo doomed && exit 3\n');
    await expect(buildAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag: newTag(), contextDir })).rejects.toThrow(
      /failed: .*returned a non-zero code: 3/,
    );

    const empty = await mkdtemp(join(tmpdir(), 'agent-server-image-'));
    contexts.push(empty);
    await expect(buildAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag: newTag(), contextDir: empty })).rejects.toThrow(
      /npm run build/,
    );
  });

  // CI runs `npm run build` before the tests, so there this always runs; locally it needs a build.
  it.skipIf(!existsSync(realBundle))('builds the real agent-server image from the package root, and it answers /alive', async () => {
    const tag = newTag();

    await buildAgentServerImage({ docker: docker!, baseImage: TEST_BASE_IMAGE, tag });

    const container = await runtime.create(sandboxRequest(tag));
    expect((await answer(container.hostPorts.AGENT_SERVER, '/alive')).status).toBe(200);
  });
});
