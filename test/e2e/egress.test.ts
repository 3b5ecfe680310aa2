import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { containerNameFor } from '../../src/sandbox-server/runtime/resource-names.js';
import { installFirewall } from '../../src/sandbox-server/runtime/firewall.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { LOCAL_NETWORK_PORT, type LocalNetwork, openLocalNetwork } from '../helpers/netns.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const run = promisify(execFile);

/**
 * Addresses a stand-in LAN on this machine holds (helpers/netns.ts): one of each range an `internet`
 * sandbox must not reach, one of them reopened by SANDBOX_INTERNET_ALLOW, and one outside them all.
 */
const TARGETS = {
  rfc1918: '10.254.77.1',
  linkLocal: '169.254.77.1',
  shared: '100.64.77.1',
  allowed: '10.254.78.1',
  benchmarking: '198.18.77.1',
} as const;
const LINK = { host: '10.254.76.1', peer: '10.254.76.2' };

/** What an `internet` sandbox reaches beyond the machine, probed only at addresses this machine holds. */
describe.runIf(docker)('egress of sandbox networks on Docker', () => {
  let cp: E2eControlPlane;
  let lan: LocalNetwork;
  const engine = docker as Docker;

  beforeAll(async () => {
    lan = await openLocalNetwork(Object.values(TARGETS), LINK);
    await buildE2eImage();
    cp = await startE2eControlPlane({ SANDBOX_INTERNET_ALLOW: TARGETS.allowed });
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
    await lan?.close();
    // Leave the machine's egress chain as a control plane without SANDBOX_INTERNET_ALLOW writes it.
    await installFirewall();
  });

  async function startSandbox(spec: Record<string, unknown>): Promise<SandboxInfo> {
    const created = await cp.request('POST', '/api/v1/sandbox-specs', { image: TEST_BASE_IMAGE, command: ['sleep', 'infinity'], exposed_ports: [], ...spec }, SandboxSpecInfoSchema);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const started = (await cp.request('POST', `/api/v1/sandboxes?sandbox_spec_id=${encodeURIComponent(created.body.id)}`, undefined, SandboxInfoSchema)).body;
    return cp.sandboxUntil(started.id, 'RUNNING');
  }

  /** A shell command run in the sandbox's container, in its network namespace. */
  async function inSandbox(sandboxId: string, ...command: string[]): Promise<string> {
    const [listed] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
    const { stdout } = await run('docker', ['exec', listed!.Id, ...command]);
    return stdout;
  }

  /** Opens a TCP connection to each address from the sandbox: "open", or how it failed. */
  async function probeFrom(sandboxId: string, addresses: readonly string[]): Promise<Record<string, string>> {
    const script =
      `const net = require("net"); Promise.all(${JSON.stringify(addresses)}.map((host) => new Promise((done) => {` +
      `const s = net.connect({ host, port: ${LOCAL_NETWORK_PORT} });` +
      'const end = (r) => { s.destroy(); done([host, r]); };' +
      's.setTimeout(3000, () => end("timeout")); s.on("connect", () => end("open")); s.on("error", (e) => end(e.code));' +
      '}))).then((r) => console.log(JSON.stringify(Object.fromEntries(r))));';
    return JSON.parse(await inSandbox(sandboxId, 'node', '-e', script));
  }

  it.each(['runc', 'runsc'] as const)(
    'keeps a %s internet sandbox from private, link-local and shared addresses, but not from one SANDBOX_INTERNET_ALLOW reopens or a public one',
    async (runtime) => {
      // The targets are live: the host reaches every one.
      const before = lan.accepted().length;
      for (const address of Object.values(TARGETS)) {
        await new Promise<void>((resolve, reject) => connect(LOCAL_NETWORK_PORT, address, resolve).on('error', reject).setTimeout(3000, () => reject(new Error(`${address}: timeout`))));
      }
      await vi.waitFor(() => expect(lan.accepted().slice(before).sort()).toEqual(Object.values(TARGETS).sort()));
      const seen = lan.accepted().length;
      const sandbox = await startSandbox({ id: `egress-${runtime}-${cp.instanceId}`, runtime });
      // Another control plane starting on this machine meanwhile writes its own allow list: ours again.
      expect(await installFirewall({ allow: [`${TARGETS.allowed}/32`] })).toBeNull();
      const results = await probeFrom(sandbox.id, Object.values(TARGETS));
      expect(results[TARGETS.allowed]).toBe('open');
      expect(results[TARGETS.benchmarking]).toBe('open');
      for (const address of [TARGETS.rfc1918, TARGETS.linkLocal, TARGETS.shared]) expect(results[address], address).not.toBe('open');
      await vi.waitFor(() => expect(lan.accepted().slice(seen).sort()).toEqual([TARGETS.allowed, TARGETS.benchmarking].sort()));
    },
    120_000,
  );

  it('gives a none sandbox a resolver that knows only its own container: every other name is forwarded inside its network, where the firewall drops it', async () => {
    const sandbox = await startSandbox({ id: `dns-none-${cp.instanceId}`, network: 'none' });
    const resolvConf = await inSandbox(sandbox.id, 'cat', '/etc/resolv.conf');
    expect(resolvConf.split('\n').filter((line) => line.startsWith('nameserver'))).toEqual(['nameserver 127.0.0.11']);
    // Its container's name is in no file of the sandbox: only the resolver knows it.
    const name = containerNameFor(sandbox.id);
    expect(await inSandbox(sandbox.id, 'grep', '-c', name, '/etc/hosts').catch(() => '0\n')).toBe('0\n');
    expect(await inSandbox(sandbox.id, 'getent', 'hosts', name)).toMatch(new RegExp(`^10\\.\\d+\\.\\d+\\.\\d+\\s+${name}`));
    // The resolver's own queries to the host's name servers leave from the sandbox's network, which
    // reaches nothing: the chain that drops them is in place (no probe is sent to a real name server).
    const { stdout } = await run('iptables', ['-S', 'DOCKER-USER']);
    expect(stdout).toMatch(/-A DOCKER-USER -i sbxn\+ .*-j DROP/);
  }, 120_000);
});
