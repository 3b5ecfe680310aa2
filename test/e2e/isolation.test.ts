import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { sessionKeyDigest } from '../../src/contracts/agent-server/session-key-digest.js';
import { EnginePageSchema } from '../../src/sandbox-server/models/engine.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const run = promisify(execFile);
const SandboxBatchSchema = z.array(SandboxInfoSchema.nullable());
const SpecBatchSchema = z.array(SandboxSpecInfoSchema.nullable());
/** What `ip -j addr show` prints: each interface's addresses. */
const IpAddrSchema = z.array(z.object({ addr_info: z.array(z.object({ local: z.string() })) }));

/** What a sandbox can do to its neighbours and the machine, driven as an agent would: its own bash. */
describe.runIf(docker)('sandbox isolation on Docker', () => {
  let cp: E2eControlPlane;
  const engine = docker as Docker;
  /** A default-spec sandbox whose agent-server must keep answering whatever the others do. */
  let neighbour: { id: string; agentUrl: string };

  beforeAll(async () => {
    await buildE2eImage();
    cp = await startE2eControlPlane();
    const started = (await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body;
    const running = await cp.sandboxUntil(started.id, 'RUNNING');
    neighbour = { id: running.id, agentUrl: agentUrlOf(running) };
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  function agentUrlOf(sandbox: SandboxInfo): string {
    return sandbox.exposed_urls?.find((u) => u.name === 'AGENT_SERVER')?.url ?? '';
  }

  async function startSandbox(spec: Record<string, unknown> | null, until = 'RUNNING'): Promise<SandboxInfo> {
    let query = '';
    if (spec) {
      const created = await cp.request('POST', '/api/v1/sandbox-specs', spec, SandboxSpecInfoSchema);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      query = `?sandbox_spec_id=${encodeURIComponent(created.body.id)}`;
    }
    const started = (await cp.request('POST', `/api/v1/sandboxes${query}`, undefined, SandboxInfoSchema)).body;
    return cp.sandboxUntil(started.id, until);
  }

  /**
   * Waits for the sandbox to be ERROR for want of memory. The engine's `oom` event can come a moment
   * after the container's exit (ERROR "exited with code 137" is seen first); the pass it triggers
   * corrects the detail.
   */
  const outOfMemory = (sandboxId: string) =>
    vi.waitFor(async () => expect((await cp.sandboxUntil(sandboxId, 'ERROR')).status_detail).toBe('out of memory'), { timeout: 30_000, interval: 250 });

  /** The answer to a bash command run in the sandbox, whatever it is (a dying sandbox's is an error). */
  const bashIn = async (sandboxId: string, command: string, timeout = 60) =>
    (await cp.request('POST', `/api/v1/sandboxes/${sandboxId}/agent/api/bash/execute_bash_command`, { command, timeout })).body;

  /** The stdout of a bash command run in the sandbox, its answer checked to be a BashOutput. */
  const stdoutIn = async (sandboxId: string, command: string, timeout = 60) =>
    (await cp.request('POST', `/api/v1/sandboxes/${sandboxId}/agent/api/bash/execute_bash_command`, { command, timeout }, BashOutputSchema)).body.stdout ?? '';

  /**
   * The neighbour's agent-server answered every probe while `work` ran, and once more after it;
   * `alsoProbe` runs beside each probe.
   */
  async function neighbourAnswersThroughout(work: Promise<unknown>, alsoProbe?: () => Promise<void>): Promise<void> {
    let done = false;
    void work.finally(() => (done = true));
    let probes = 0;
    while (!done) {
      const alive = await fetch(`${neighbour.agentUrl}/alive`, { signal: AbortSignal.timeout(5_000) });
      expect(alive.status).toBe(200);
      await alsoProbe?.();
      probes++;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await work;
    expect(probes).toBeGreaterThan(0);
    expect((await fetch(`${neighbour.agentUrl}/alive`)).status).toBe(200);
  }

  /** The output of a shell command run as root in the sandbox's container (docker exec), stderr included. */
  async function asRootIn(sandboxId: string, command: string): Promise<string> {
    const [listed] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
    const { stdout, stderr } = await run('docker', ['exec', listed!.Id, 'sh', '-c', command], { maxBuffer: 64 * 1024 * 1024 });
    return stdout + stderr;
  }

  it('never puts the session key in the container: no environment, no file, even read as root; the agent is not given even its digest', async () => {
    const [sandbox] = (await cp.request('GET', `/api/v1/sandboxes?id=${neighbour.id}`, undefined, SandboxBatchSchema)).body;
    const key = sandbox?.session_api_key ?? '';
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const digest = sessionKeyDigest(key);
    const agent = (path: string) => `/api/v1/sandboxes/${neighbour.id}/agent${path}`;

    // The container holds only the digest, in its configured environment.
    const [listed] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${neighbour.id}`] } });
    const info = await engine.getContainer(listed!.Id).inspect();
    expect(info.Config.Env).toContain(`SESSION_API_KEY_SHA256=${digest}`);
    expect(JSON.stringify(info)).not.toContain(key);

    // Read as root: every process's environment and command line, then every file outside /proc
    // and /sys. One after the other, as the search's own command line holds the key; and before the
    // agent's search below, which the agent-server records in its bash event log.
    const processes = await asRootIn(neighbour.id, 'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < $f; echo; done; echo read');
    expect(processes).toContain(`SESSION_API_KEY_SHA256=${digest}`);
    expect(processes).toMatch(/read\n$/);
    expect(processes).not.toContain(key);
    expect(await asRootIn(neighbour.id, `grep -rsl --exclude-dir=proc --exclude-dir=sys -F '${key}' / ; echo searched`)).toBe('searched\n');

    // As the agent: its own environment holds neither the key nor its digest. Under gVisor it can
    // read every process's environment (runc keeps root's from it): the agent-server's holds the
    // digest, which opens nothing (below), and none holds the key. No file it can read holds it.
    const own = await stdoutIn(neighbour.id, 'id -un; env');
    expect(own).toMatch(/^openhands\n[^]*\nPATH=/);
    expect(own).not.toContain('SESSION_API_KEY');
    expect(own).not.toContain(digest);
    const readable = await stdoutIn(neighbour.id, 'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < $f; done 2>/dev/null; echo read');
    expect(readable).toMatch(/\nread\n$/);
    expect(readable).not.toContain(key);
    expect(await stdoutIn(neighbour.id, `grep -rsl --exclude-dir=proc --exclude-dir=sys -F '${key}' / ; echo searched`)).toBe('searched\n');
    // The file routes run in the agent-server itself (root): what they can read holds no key either.
    for (const path of ['/proc/1/environ', '/proc/self/environ']) {
      const download = await cp.request('GET', agent(`/api/file/download?path=${encodeURIComponent(path)}`));
      expect(download.status, path).toBe(200);
      expect(JSON.stringify(download.body), path).not.toContain(key);
    }

    // And the key works, through the proxy and directly; its digest and a wrong key do not.
    expect((await cp.request('GET', agent('/api/conversations/count'))).status).toBe(200);
    expect((await fetch(`${neighbour.agentUrl}/api/conversations/count`, { headers: { 'X-Session-API-Key': key } })).status).toBe(200);
    for (const wrong of [digest, `${key}x`]) {
      expect((await fetch(`${neighbour.agentUrl}/api/conversations/count`, { headers: { 'X-Session-API-Key': wrong } })).status).toBe(401);
    }
  });

  it.each(['runc', 'runsc'] as const)("gives a spec's initial_env to the agent's processes only, never where the %s agent reads other processes' or root's", async (runtime) => {
    const token = `token-${randomBytes(12).toString('hex')}`;
    const sandbox = await startSandbox({ id: `env-${runtime}-${cp.instanceId}`, image: E2E_IMAGE, runtime, initial_env: { PROBE_TOKEN: token } });
    // Meant for the agent's shell: there it is.
    expect(await stdoutIn(sandbox.id, 'echo "$PROBE_TOKEN"')).toBe(`${token}\n`);
    // Not in any other process's environment the agent can read (gVisor lets it read root's), nor
    // in any file it can read; the file it came in is root's alone.
    const others = await stdoutIn(
      sandbox.id,
      'for p in /proc/[0-9]*; do [ "$(stat -c %U $p)" = openhands ] || tr "\\0" "\\n" < $p/environ; done 2>/dev/null; echo read',
    );
    expect(others).toMatch(/read\n$/);
    expect(others).not.toContain(token);
    expect(await stdoutIn(sandbox.id, `grep -rsl --exclude-dir=proc --exclude-dir=sys -F '${token}' / ; echo searched`)).toBe('searched\n');
    expect(await stdoutIn(sandbox.id, 'cat /etc/sandbox-server/initial-env.json 2>&1; echo')).toMatch(/Permission denied/);
    // Read as root, the agent-server's and init's environments hold it neither.
    expect(await asRootIn(sandbox.id, 'tr "\\0" "\\n" < /proc/1/environ; for p in $(pgrep -f agent-server.js); do tr "\\0" "\\n" < /proc/$p/environ; done; echo read')).not.toContain(token);
  }, 120_000);

  /** The sandbox's one network: its own address there, and the host's (the bridge gateway). */
  async function networkOf(sandboxId: string): Promise<{ name: string; address: string; gateway: string }> {
    const [listed] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
    const networks = Object.entries((await engine.getContainer(listed!.Id).inspect()).NetworkSettings.Networks);
    expect(networks).toHaveLength(1);
    const [name, settings] = networks[0]!;
    return { name, address: settings.IPAddress, gateway: settings.Gateway };
  }

  /**
   * The host's own address on the engine's default bridge, read from the host's interface (with
   * `ip`, which also lists it while no container is attached and the link is down): the network's
   * IPAM gateway is absent on an engine whose `bridge` network lost it.
   */
  async function defaultBridgeAddress(): Promise<string> {
    const bridge = await engine.getNetwork('bridge').inspect();
    const name = bridge.Options?.['com.docker.network.bridge.name'] ?? 'docker0';
    const { stdout } = await run('ip', ['-j', '-4', 'addr', 'show', 'dev', name]);
    const address = IpAddrSchema.parse(JSON.parse(stdout))[0]?.addr_info[0]?.local;
    if (!address) throw new Error(`the host has no IPv4 address on the default bridge's interface ${name}`);
    return address;
  }

  /** A TCP listener the test opens on one of the host's own addresses, counting who connects. */
  async function listenOnHost(address: string): Promise<{ target: string; accepted: () => number; server: Server }> {
    let accepted = 0;
    const server = createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, address, resolve));
    return { target: `${address}:${(server.address() as AddressInfo).port}`, accepted: () => accepted, server };
  }

  async function connectFromHost(target: string): Promise<void> {
    const [host, port] = target.split(':');
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), host, () => {
        socket.destroy();
        resolve();
      }).on('error', reject);
    });
  }

  /**
   * Opens a TCP connection to each `address:port` from a shell in the sandbox (the agent's own
   * route): "open", or how it failed (a dropped packet shows as "timeout").
   */
  async function probeFrom(sandboxId: string, targets: string[]): Promise<Record<string, string>> {
    const script =
      `const net = require("net"); Promise.all(${JSON.stringify(targets)}.map((t) => new Promise((done) => {` +
      'const s = net.connect({ host: t.split(":")[0], port: Number(t.split(":")[1]) });' +
      'const end = (r) => { s.destroy(); done([t, r]); };' +
      's.setTimeout(5000, () => end("timeout")); s.on("connect", () => end("open")); s.on("error", (e) => end(e.code));' +
      '}))).then((r) => console.log(JSON.stringify(Object.fromEntries(r))));';
    const stdout = await stdoutIn(sandboxId, `node -e '${script}'`);
    return JSON.parse(stdout);
  }

  // Everything probed is on this machine: the neighbour's address, and listeners on the host's
  // docker0 address and on the host's side of each sandbox's own bridge.
  it.each(['runc', 'runsc'] as const)(
    'keeps a %s sandbox from its neighbour and the host, and one with network "none" from everything, both still served',
    async (runtime) => {
      const [online, offline] = await Promise.all([
        startSandbox({ id: `online-${runtime}-${cp.instanceId}`, image: E2E_IMAGE, runtime }),
        startSandbox({ id: `offline-${runtime}-${cp.instanceId}`, image: E2E_IMAGE, runtime, network: 'none' }),
      ]);
      // Every runtime lists and stats the workspace (gVisor 2022-12-19 answered statx with EINVAL).
      expect(await stdoutIn(online.id, 'ls -la /workspace >/dev/null && stat -c %F /workspace && echo listed')).toBe('directory\nlisted\n');
      const neighbourNet = await networkOf(neighbour.id);
      const onlineNet = await networkOf(online.id);
      const offlineNet = await networkOf(offline.id);
      expect(new Set([neighbourNet.name, onlineNet.name, offlineNet.name]).size).toBe(3);
      expect(onlineNet.name).not.toBe('bridge');
      const docker0 = await defaultBridgeAddress();
      const listeners = await Promise.all([docker0, onlineNet.gateway, offlineNet.gateway].map(listenOnHost));
      try {
        const [onDocker0, onOnlineBridge, onOfflineBridge] = listeners.map((l) => l.target) as [string, string, string];
        // The targets are live: the host itself reaches the neighbour's agent-server and its own listeners.
        await connectFromHost(`${neighbourNet.address}:8000`);
        for (const listener of listeners) await connectFromHost(listener.target);
        await vi.waitFor(() => expect(listeners.map((l) => l.accepted())).toEqual([1, 1, 1]));

        const neighbourAgent = `${neighbourNet.address}:8000`;
        // Each shell reaches its own agent-server (the probe works), and nothing else.
        const fromOnline = await probeFrom(online.id, ['127.0.0.1:8000', neighbourAgent, onDocker0, onOnlineBridge]);
        const fromOffline = await probeFrom(offline.id, ['127.0.0.1:8000', neighbourAgent, `${onlineNet.address}:8000`, onDocker0, onOfflineBridge]);
        for (const results of [fromOnline, fromOffline]) {
          const [own, ...others] = Object.entries(results);
          expect(own).toEqual(['127.0.0.1:8000', 'open']);
          for (const [target, result] of others) expect(result, target).not.toBe('open');
        }
        expect(listeners.map((l) => l.accepted())).toEqual([1, 1, 1]);
      } finally {
        for (const listener of listeners) listener.server.close();
      }

      // The control plane still serves all three through their published 127.0.0.1 ports.
      for (const sandbox of [neighbour, online, offline]) {
        expect((await cp.request('GET', `/api/v1/sandboxes/${sandbox.id}/agent/alive`)).status).toBe(200);
      }
      expect(await stdoutIn(offline.id, 'echo served offline')).toBe('served offline\n');
      expect((await cp.request('GET', `/api/v1/sandbox-specs?id=offline-${runtime}-${cp.instanceId}`, undefined, SpecBatchSchema)).body[0]?.network).toBe('none');
    },
    // Two sandboxes start (gVisor's take a while on a loaded machine), then one 5 s probe each.
    120_000,
  );

  it('self-tested both runtimes on the engine at start, and shows it', async () => {
    const engines = (await cp.request('GET', '/api/v1/engines', undefined, EnginePageSchema)).body.items;
    for (const engine of engines) {
      expect(engine.runtimes?.map((probe) => [probe.runtime, probe.status, probe.detail])).toEqual([
        ['runc', 'ok', null],
        ['runsc', 'ok', null],
      ]);
    }
    expect(engines.length).toBeGreaterThan(0);
  });

  it('gives the default spec memory, process and CPU limits', async () => {
    const [spec] = (await cp.request('GET', `/api/v1/sandbox-specs?id=${encodeURIComponent(E2E_IMAGE)}`, undefined, SpecBatchSchema)).body;
    expect(spec).toMatchObject({ memory_mb: 2048, pids_limit: 512, cpus: 1 });
    const info = await engine.getContainer((await engine.listContainers({ filters: { label: [`sandbox-server.id=${neighbour.id}`] } }))[0]!.Id).inspect();
    expect(info.HostConfig).toMatchObject({ Memory: 2048 * 1024 * 1024, PidsLimit: 512, NanoCpus: 1e9 });
  });

  // The bomb stops at the agent's process limit: the cgroup's under runc; under runsc, whose cgroup
  // counts gVisor's host threads and would end the whole sandbox, the agent user's RLIMIT_NPROC,
  // set below it. Either way the sandbox's agent-server keeps answering. A memory hog is then killed
  // alone under runc; under runsc it takes its own sandbox down ("out of memory"), nothing else.
  it.each(['runc', 'runsc'] as const)('contains a fork bomb and a memory hog in one %s sandbox while its neighbour keeps answering', async (runtime) => {
    const spec = { image: E2E_IMAGE, memory_mb: 256, pids_limit: 96, cpus: 0.5, runtime };
    const limited = await startSandbox({ ...spec, id: `limits-${runtime}-${cp.instanceId}` });
    const limitedAgent = agentUrlOf(limited);

    // The bomb forks until a limit refuses it; pure bash builtins then wait and kill its whole
    // process group, since every external command would need a process slot too.
    const bomb = bashIn(
      limited.id,
      "setsid bash -c ':(){ :|:& };:' 2>/dev/null & bomb=$!; while (( SECONDS < 4 )); do :; done; " +
        'for _ in 1 2 3 4 5; do kill -9 -- -$bomb 2>/dev/null; done; echo contained',
    );
    let limitedAnswered = 0;
    await neighbourAnswersThroughout(
      bomb,
      async () => {
        if ((await fetch(`${limitedAgent}/alive`, { signal: AbortSignal.timeout(5_000) })).status === 200) limitedAnswered++;
      },
    );
    expect(await bomb).toMatchObject({ stdout: expect.stringContaining('contained') });
    expect(limitedAnswered).toBeGreaterThan(0);
    expect(await stdoutIn(limited.id, 'echo still here')).toContain('still here');
    expect((await cp.request('GET', `/api/v1/sandboxes?id=${limited.id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING');

    const hogCommand = "node -e 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))'; echo exit=$?";
    if (runtime === 'runc') {
      const hog = bashIn(limited.id, hogCommand);
      await neighbourAnswersThroughout(hog);
      // The kernel killed the hog (SIGKILL: 128 + 9) at the sandbox's limit, not anything outside it.
      expect(await hog).toMatchObject({ stdout: expect.stringContaining('exit=137') });
      expect(await stdoutIn(limited.id, 'echo still here')).toContain('still here');
    } else {
      // The agent's 16 processes and threads that 96 host tasks leave it under gVisor are too few
      // for node's threads: the hog runs in a sandbox with the default PIDs limit.
      const hogs = await startSandbox({ ...spec, pids_limit: 512, id: `hog-${runtime}-${cp.instanceId}` });
      await neighbourAnswersThroughout(bashIn(hogs.id, hogCommand).catch(() => undefined));
      await outOfMemory(hogs.id);
    }
  }, 120_000);

  // runc: the kernel kills the main process. runsc: it kills one of gVisor's own host processes and
  // leaves the container stuck at its limit, which the Docker driver then ends.
  it.each(['runc', 'runsc'] as const)('reports "out of memory" for a %s sandbox whose main process meets its limit', async (runtime) => {
    const hog = await startSandbox(
      {
        id: `oom-${runtime}-${cp.instanceId}`,
        image: E2E_IMAGE,
        runtime,
        command: ['node', '-e', 'const a = []; setInterval(() => a.push(Buffer.alloc(8 << 20, 1)), 10)'],
        exposed_ports: [],
        memory_mb: 64,
      },
      'ERROR',
    );
    await outOfMemory(hog.id);
    expect((await fetch(`${neighbour.agentUrl}/alive`)).status).toBe(200);
    // A runsc start, the watchdog's five readings and the kill together took over 30 s on a loaded CI machine.
  }, 90_000);
});
