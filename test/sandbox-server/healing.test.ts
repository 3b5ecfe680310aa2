import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { sessionKeyDigest } from '../../src/contracts/agent-server/session-key-digest.js';
import { loadConfig } from '../../src/sandbox-server/config.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { LABEL_AGENT_SERVER_VERSION } from '../../src/sandbox-server/runtime/runtime.js';
import { type RunningSandboxServer, startSandboxServer } from '../../src/sandbox-server/server.js';
import { readAnswer, type Answer } from '../helpers/answer.js';
import { ALIVE_SERVER_COMMAND, connectDocker, removeInstanceResources, TEST_BASE_IMAGE, testInstanceId } from '../helpers/docker.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
const docker = await connectDocker();
const KEY = 'healing-test-key-0123456789';
const START_TIMEOUT_SECONDS = 8;
const VERSION = `0.0.0+healing-${testInstanceId()}`;

/**
 * The lifecycle heals, driven through HTTP against the control plane on the real engine. Sweeps are
 * 10 minutes apart, so everything seen here comes from requests, requeues and Docker's events.
 */
describe.runIf(docker)('a lifecycle that heals (Docker)', { timeout: 90_000 }, () => {
  const engine = docker as Docker;
  const instanceId = testInstanceId();
  const image = `sandbox-server-test/labelled:${instanceId}`;
  let dataDir: string;
  let server: RunningSandboxServer;

  async function call<S extends z.ZodType = z.ZodUnknown>(method: string, path: string, body?: unknown, schema?: S): Promise<Answer<z.output<S>>> {
    const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return readAnswer(await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }), schema);
  }

  async function info(id: string): Promise<SandboxInfo> {
    const [sandbox] = (await call('GET', `/api/v1/sandboxes?id=${id}`, undefined, z.array(SandboxInfoSchema.nullable()))).body;
    if (!sandbox) throw new Error(`no sandbox ${id}`);
    return sandbox;
  }

  async function until(id: string, status: string, detail?: string): Promise<SandboxInfo> {
    return vi.waitFor(
      async () => {
        const current = await info(id);
        expect(current.status).toBe(status);
        // A removal shows "being removed" before it is done.
        if (detail !== undefined) expect(current.status_detail).toBe(detail);
        return current;
      },
      { timeout: 60_000, interval: 50 },
    );
  }

  async function startSandbox(specId: string): Promise<string> {
    const { status, body } = await call('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema);
    expect(status).toBe(200);
    return body.id;
  }

  async function containerOf(sandboxId: string): Promise<Docker.ContainerInfo> {
    const [container] = await engine.listContainers({ all: true, filters: { label: [`sandbox-server.id=${sandboxId}`] } });
    if (!container) throw new Error(`no container for ${sandboxId}`);
    return container;
  }

  /** Runs a shell line in the container; fails on a non-zero exit. */
  async function exec(containerId: string, line: string): Promise<void> {
    await run('docker', ['exec', containerId, 'sh', '-c', line]);
  }

  beforeAll(async () => {
    // The base image with the label our image build sets, so that the version shows end to end.
    const base = await engine.createContainer({ Image: TEST_BASE_IMAGE, Cmd: ['true'] });
    await base.commit({ repo: image.split(':')[0], tag: image.split(':')[1], changes: [`LABEL ${LABEL_AGENT_SERVER_VERSION}=${VERSION}`] });
    await base.remove();
    dataDir = await makeTempDir();
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      SANDBOX_SERVER_API_KEYS: KEY,
      SANDBOX_SERVER_INSTANCE: instanceId,
      RECONCILE_INTERVAL_MS: '600000',
      SANDBOX_START_TIMEOUT_SECONDS: String(START_TIMEOUT_SECONDS),
      SANDBOX_WARM_POOL: '0',
    });
    server = await startSandboxServer(config, { ensureImage: async () => 'present' });
    for (const [id, command] of [
      ['alive', ALIVE_SERVER_COMMAND],
      ['silent', ['sh', '-c', 'echo starting up; echo "no agent-server in here" >&2; exec sleep 600']],
    ] as const) {
      expect((await call('POST', '/api/v1/sandbox-specs', { id: `${instanceId}-${id}`, image, command })).status).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await removeInstanceResources(engine, instanceId);
    await engine.getImage(image).remove({ force: true }).catch(() => undefined);
    if (dataDir) await removeDir(dataDir);
  });

  it('turns a container killed from outside ERROR on its die event, and POST /resume starts it afresh with a new key and its data kept', async () => {
    const id = await startSandbox(`${instanceId}-alive`);
    const running = await until(id, 'RUNNING');
    expect(running.agent_server_version).toBe(VERSION);
    const before = await containerOf(id);
    await exec(before.Id, 'echo kept > /data/note');

    const events = await engine.getEvents({ filters: { type: ['container'], event: ['die'], label: [`sandbox-server.id=${id}`] } });
    const died = new Promise<number>((resolve) => events.once('data', () => resolve(Date.now())));
    await engine.getContainer(before.Id).kill();
    const diedAt = await died;
    (events as unknown as { destroy(): void }).destroy();
    const failed = await until(id, 'ERROR');
    console.log(`die event -> ERROR through the API: ${Date.now() - diedAt} ms (sweeps off)`);
    expect(failed.status_detail).toBe('container exited with code 137');

    expect(await call('POST', `/api/v1/sandboxes/${id}/resume`)).toEqual({ status: 200, body: { success: true } });
    const resumed = await until(id, 'RUNNING');
    expect(resumed.session_api_key).not.toBe(running.session_api_key);
    const after = await containerOf(id);
    expect(after.Id).not.toBe(before.Id);
    // The new key reaches the new container as its digest only, never the key itself.
    const env = (await engine.getContainer(after.Id).inspect()).Config.Env;
    expect(env).toContain(`SESSION_API_KEY_SHA256=${sessionKeyDigest(resumed.session_api_key!)}`);
    expect(env.join('\n')).not.toContain(resumed.session_api_key);
    await exec(after.Id, 'test "$(cat /data/note)" = kept');

    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    expect(metrics).toContain(`sandboxes_by_agent_server_version{version="${VERSION}"} 1`);
  });

  it('recreates a sandbox whose container was removed from outside (MISSING) on POST /resume', async () => {
    const id = await startSandbox(`${instanceId}-alive`);
    const running = await until(id, 'RUNNING');
    await engine.getContainer((await containerOf(id)).Id).remove({ force: true });
    await until(id, 'MISSING', 'container was removed outside the control plane');

    expect((await call('POST', `/api/v1/sandboxes/${id}/resume`)).status).toBe(200);
    const resumed = await until(id, 'RUNNING');
    expect(resumed.session_api_key).not.toBe(running.session_api_key);
  });

  it('turns a sandbox whose agent-server never answers ERROR after SANDBOX_START_TIMEOUT_SECONDS, with its last log lines', async () => {
    const id = await startSandbox(`${instanceId}-silent`);
    const failed = await until(id, 'ERROR');
    expect(failed.status_detail).toContain(`the agent-server did not answer /alive within ${START_TIMEOUT_SECONDS} s`);
    expect(failed.status_detail).toContain('starting up');
    expect(failed.status_detail).toContain('no agent-server in here');
    expect((await containerOf(id)).State).toBe('running');
  });
});
