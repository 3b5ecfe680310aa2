import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const run = promisify(execFile);
const MB = 1024 * 1024;

/** The limits a sandbox gets from the server, and what bounds its disk: settings a test can tell apart from Docker's. */
const SETTINGS = {
  SANDBOX_DEFAULT_MEMORY_MB: '300',
  SANDBOX_DEFAULT_PIDS: '100',
  SANDBOX_DEFAULT_CPUS: '0.5',
  SANDBOX_DEFAULT_DISK_MB: '64',
  SANDBOX_DISK_CHECK_SECONDS: '1',
  SANDBOX_LOG_MAX_MB: '1',
  SANDBOX_LOG_MAX_FILES: '2',
};

describe.runIf(docker)('resource limits of every sandbox on Docker', () => {
  let cp: E2eControlPlane;
  const engine = docker as Docker;

  beforeAll(async () => {
    await buildE2eImage();
    cp = await startE2eControlPlane(SETTINGS);
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  /** A sandbox of a spec created through the API with only what `spec` names: no limit among them unless said. */
  async function startSandbox(spec: Record<string, unknown>): Promise<SandboxInfo> {
    const created = await cp.request('POST', '/api/v1/sandbox-specs', { image: TEST_BASE_IMAGE, command: ['sleep', 'infinity'], exposed_ports: [], ...spec }, SandboxSpecInfoSchema);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const started = (await cp.request('POST', `/api/v1/sandboxes?sandbox_spec_id=${encodeURIComponent(created.body.id)}`, undefined, SandboxInfoSchema)).body;
    return cp.sandboxUntil(started.id, 'RUNNING');
  }

  async function containerOf(sandboxId: string): Promise<Docker.ContainerInspectInfo> {
    const [listed] = await engine.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
    return engine.getContainer(listed!.Id).inspect();
  }

  async function inSandbox(sandboxId: string, script: string): Promise<string> {
    const { stdout } = await run('docker', ['exec', (await containerOf(sandboxId)).Id, 'sh', '-c', script], { timeout: 60_000 });
    return stdout;
  }

  it("gives a custom spec's sandbox the server's default memory, process, CPU and log limits, and none where the spec asked for none", async () => {
    const limited = await startSandbox({ id: `defaults-${cp.instanceId}` });
    const { HostConfig } = await containerOf(limited.id);
    expect(HostConfig).toMatchObject({ Memory: 300 * MB, PidsLimit: 100, NanoCpus: 0.5e9 });
    expect(HostConfig.LogConfig).toEqual({ Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '2' } });

    const unlimited = await startSandbox({ id: `unlimited-${cp.instanceId}`, memory_mb: null, pids_limit: null, cpus: null, disk_mb: null });
    const open = (await containerOf(unlimited.id)).HostConfig;
    expect([open.Memory, open.NanoCpus, open.PidsLimit ?? 0]).toEqual([0, 0, 0]);
  }, 120_000);

  it("keeps a sandbox's log at its rotation settings however much it prints", async () => {
    // 8 MB of output at once, then it idles.
    const chatty = await startSandbox({ id: `chatty-${cp.instanceId}`, command: ['sh', '-c', 'yes 0123456789abcdef0123456789abcdef | head -c 8000000; sleep infinity'] });
    const { LogPath } = await containerOf(chatty.id);
    // Docker rotates as it writes (a moment with one file included): what counts is where it settles.
    await vi.waitFor(
      async () => {
        const files = (await readdir(dirname(LogPath))).filter((f) => f.startsWith(basename(LogPath)));
        expect(files.sort()).toEqual([basename(LogPath), `${basename(LogPath)}.1`]);
        const sizes = await Promise.all(files.map(async (file) => (await stat(`${dirname(LogPath)}/${file}`)).size));
        for (const size of sizes) expect(size).toBeLessThanOrEqual(1.1 * MB);
        // It printed 8 MB: the rest was dropped.
        expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(MB);
      },
      { timeout: 30_000, interval: 500 },
    );
  }, 120_000);

  it.each([
    ['runc', 'its data volume', '/data/fill'],
    ['runsc', 'its writable layer', '/root/fill'],
  ] as const)('stops a %s sandbox writing past its disk limit into %s, saying why, while its neighbour keeps working', async (runtime, _where, path) => {
    const [writer, neighbour] = await Promise.all([
      startSandbox({ id: `filler-${runtime}-${cp.instanceId}`, runtime }),
      startSandbox({ id: `neighbour-${runtime}-${cp.instanceId}`, runtime }),
    ]);
    // The neighbour writes within the limit; the writer keeps writing past it until it is stopped
    // (at most 600 MB, for some 40 s: on a loaded machine 160 MB were written before a check saw them).
    await inSandbox(neighbour.id, `dd if=/dev/zero of=${path} bs=1M count=16 2>/dev/null; sync`);
    // A writer that was stopped never prints its last line. `docker exec` into a killed container
    // fails under runc, but under runsc it has also answered success with what was printed so far.
    const writing = inSandbox(writer.id, `for i in $(seq 1 150); do dd if=/dev/zero of=${path}.$i bs=1M count=4 2>/dev/null; sync; sleep 0.2; done; echo finished`).catch(() => 'killed');
    const stopped = await cp.sandboxUntil(writer.id, 'ERROR');
    expect(stopped.status_detail).toMatch(/^disk limit exceeded: it held \d+ MB \(writable layer \d+ MB, data volume \d+ MB\) of its 64 MB \(disk_mb\), so it was stopped/);
    expect(await writing).not.toContain('finished');
    // The engine shows the kill a moment after the processes died.
    await vi.waitFor(async () => expect((await containerOf(writer.id)).State.Running).toBe(false), { timeout: 10_000 });
    // Later passes keep the reason.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await cp.sandboxUntil(writer.id, 'ERROR')).status_detail).toBe(stopped.status_detail);

    expect((await cp.sandboxUntil(neighbour.id, 'RUNNING')).status).toBe('RUNNING');
    expect(await inSandbox(neighbour.id, `ls -l ${path} | wc -l; echo still working`)).toBe('1\nstill working\n');
  }, 120_000);
});
