import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SandboxEgressInfoSchema } from '../../src/sandbox-server/models/egress-policy.js';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { LOCAL_NETWORK_PORT, type LocalNetwork, openLocalNetwork } from '../helpers/netns.js';
import { makeTestCertificates, type TestCertificates } from '../helpers/test-ca.js';
import { type EgressProbe, probeScript } from './egress-probe.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const run = promisify(execFile);

/** The "remote" web servers: a loopback address of their own, so they may hold ports 80 and 443. */
const REMOTE = `127.67.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
/** A stand-in LAN (helpers/netns.ts) for raw-address rules: one block allowed, one not. */
const RAW = { allowed: '10.254.88.1', denied: '10.254.87.1' } as const;
const LINK = { host: '10.254.86.1', peer: '10.254.86.2' };
const NAMES = ['allowed.test', 'denied.test', 'later.test', 'www.wild.test'];

/** What an allowlist sandbox reaches, under runc and runsc, probed only at servers on this machine. */
describe.runIf(docker)('allowlist egress on Docker', () => {
  let cp: E2eControlPlane;
  let lan: LocalNetwork;
  let certs: TestCertificates;
  let hostService: Server;
  let hostPort: number;
  const remotes: Server[] = [];
  const engine = docker as Docker;

  beforeAll(async () => {
    certs = await makeTestCertificates(NAMES);
    const answer = (protocol: string) => (req: { headers: { host?: string }; url?: string }, res: { end: (body: string) => void }) => res.end(`${protocol} ${req.headers.host} ${req.url}`);
    for (const [server, port] of [[createHttpServer(answer('http')), 80], [createHttpsServer({ cert: certs.cert, key: certs.key }, answer('https')), 443]] as const) {
      server.listen(port, REMOTE);
      await once(server, 'listening');
      remotes.push(server);
    }
    hostService = createHttpServer((_req, res) => res.end('the host service'));
    hostService.listen(0, '127.0.0.1');
    await once(hostService, 'listening');
    hostPort = (hostService.address() as AddressInfo).port;
    lan = await openLocalNetwork(Object.values(RAW), LINK);
    await buildE2eImage();
    cp = await startE2eControlPlane({ SANDBOX_EGRESS_HOSTS: NAMES.map((name) => `${name}=${REMOTE}`).join(',') });
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
    await lan?.close();
    for (const server of [...remotes, hostService]) server?.close();
  });

  async function startAllowlistSandbox(runtime: string, egress: { allow: string[]; deny: string[] }): Promise<SandboxInfo> {
    const spec = { id: `allowlist-${runtime}-${cp.instanceId}`, image: TEST_BASE_IMAGE, command: ['sleep', 'infinity'], exposed_ports: [], runtime, network: 'allowlist', egress };
    const created = await cp.request('POST', '/api/v1/sandbox-specs', spec, SandboxSpecInfoSchema);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const started = (await cp.request('POST', `/api/v1/sandboxes?sandbox_spec_id=${encodeURIComponent(created.body.id)}`, undefined, SandboxInfoSchema)).body;
    return cp.sandboxUntil(started.id, 'RUNNING');
  }

  async function probe(sandboxId: string, probes: readonly EgressProbe[]): Promise<string[]> {
    const [listed] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
    const { stdout } = await run('docker', ['exec', listed!.Id, 'node', '-e', probeScript(probes, certs.ca)]);
    return JSON.parse(stdout) as string[];
  }

  async function deniedCount(sandboxId: string, via: string): Promise<number> {
    const text = String((await cp.request('GET', '/metrics')).body);
    const line = text.split('\n').find((l) => l.startsWith(`sandbox_egress_denied_total{sandbox_id="${sandboxId}",via="${via}"}`));
    return Number(line?.split(' ').at(-1) ?? 0);
  }

  it.each(['runc', 'runsc'] as const)(
    'lets a %s sandbox reach allowed names, its raw block and its host port only, and follows a PATCH at once',
    async (runtime) => {
      const sandbox = await startAllowlistSandbox(runtime, {
        allow: ['allowed.test', '*.wild.test', `${RAW.allowed}:${LOCAL_NETWORK_PORT}`, `host.sandbox.internal:${hostPort}`],
        deny: [],
      });
      // Its rules are written by the gateway's next pass after the container shows up.
      await vi.waitFor(async () => expect(await probe(sandbox.id, [{ kind: 'dns', name: 'allowed.test' }])).not.toEqual(['EAI_AGAIN']), { timeout: 15_000, interval: 500 });
      const [listed] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandbox.id}`] } });
      const gateway = Object.values(listed!.NetworkSettings.Networks)[0]!.Gateway;

      const accepted = lan.accepted().length;
      const tunnel = Array.from({ length: 4 }, () => `${randomBytes(12).toString('hex')}.denied.test`);
      const results = await probe(sandbox.id, [
        { kind: 'dns', name: 'allowed.test' },
        { kind: 'proxy-get', url: 'http://allowed.test/via-proxy' },
        { kind: 'connect', host: 'allowed.test', port: 443 },
        { kind: 'direct', url: 'https://www.wild.test/transparent' },
        { kind: 'direct', url: 'http://allowed.test/plain' },
        { kind: 'tcp', host: RAW.allowed, port: LOCAL_NETWORK_PORT },
        { kind: 'proxy-get', url: `http://host.sandbox.internal:${hostPort}/` },
        { kind: 'tcp', host: 'host.sandbox.internal', port: hostPort },
        // Refused: a denied name by DNS, proxy, CONNECT and directly; a raw address; a DNS tunnel.
        { kind: 'dns', name: 'denied.test' },
        { kind: 'proxy-get', url: 'http://denied.test/' },
        { kind: 'connect', host: 'denied.test', port: 443 },
        { kind: 'direct', url: `https://${gateway}/` },
        { kind: 'tcp', host: RAW.denied, port: LOCAL_NETWORK_PORT },
        { kind: 'proxy-get', url: `http://host.sandbox.internal:${hostPort + 1}/` },
        ...tunnel.map((name): EgressProbe => ({ kind: 'dns', name })),
      ]);
      expect(results.slice(0, 8)).toEqual([
        gateway,
        '200 http allowed.test /via-proxy',
        '200 https allowed.test /',
        '200 https www.wild.test /transparent',
        '200 http allowed.test /plain',
        'read hi',
        '200 the host service',
        expect.stringContaining('the host service'),
      ]);
      const refused = results.slice(8);
      expect(refused[0]).toMatch(/^(ENOTFOUND|EAI_AGAIN|ESERVFAIL|EREFUSED)$/);
      expect(refused[1]).toMatch(/^403 /);
      expect(refused[2]).toBe('403');
      expect(refused[3]).toMatch(/^(ECONNRESET|EPROTO|ECONNREFUSED)$/);
      expect(refused[4]).toMatch(/^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH)$/);
      expect(refused[5]).toMatch(/^403 /);
      for (const outcome of refused.slice(6)) expect(outcome).toMatch(/^(ENOTFOUND|EAI_AGAIN|ESERVFAIL|EREFUSED)$/);
      // Only the allowed block saw a connection.
      await vi.waitFor(() => expect(lan.accepted().slice(accepted)).toEqual([RAW.allowed]));

      // Each refusal is counted, by what refused it, and recorded as an event (rate-limited).
      await vi.waitFor(async () => {
        expect(await deniedCount(sandbox.id, 'dns')).toBeGreaterThanOrEqual(1 + tunnel.length);
        expect(await deniedCount(sandbox.id, 'proxy')).toBeGreaterThanOrEqual(4);
        expect(await deniedCount(sandbox.id, 'packet')).toBeGreaterThanOrEqual(1);
      }, { timeout: 10_000, interval: 250 });
      await vi.waitFor(async () => {
        const events = (await cp.request('GET', `/api/v1/events/search?type=sandbox.egress_denied&sandbox_id=${sandbox.id}`, undefined, LifecycleEventPageSchema)).body;
        expect(events.items.length).toBeGreaterThanOrEqual(1);
        expect(events.items.length).toBeLessThanOrEqual(2);
        expect(events.items[0]?.status_detail).toMatch(/^\d+ denied: /);
      }, { timeout: 15_000, interval: 500 });

      // A PATCH is in force when it answers: denied.test now, allowed.test no more.
      const patched = await cp.request('PATCH', `/api/v1/sandboxes/${sandbox.id}`, { egress: { allow: ['denied.test', `${RAW.denied}`], deny: [] } }, SandboxEgressInfoSchema);
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toEqual({ sandbox_id: sandbox.id, network: 'allowlist', egress: { allow: ['denied.test', RAW.denied], deny: [] }, inherited: false });
      const after = await probe(sandbox.id, [
        { kind: 'proxy-get', url: 'http://denied.test/now' },
        { kind: 'direct', url: 'https://denied.test/now' },
        { kind: 'tcp', host: RAW.denied, port: LOCAL_NETWORK_PORT },
        { kind: 'proxy-get', url: 'http://allowed.test/' },
        { kind: 'tcp', host: RAW.allowed, port: LOCAL_NETWORK_PORT },
        { kind: 'tcp', host: 'host.sandbox.internal', port: hostPort },
      ]);
      expect(after.slice(0, 3)).toEqual(['200 http denied.test /now', '200 https denied.test /now', 'read hi']);
      expect(after[3]).toMatch(/^403 /);
      expect(after[4]).toMatch(/^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH)$/);
      expect(after[5]).not.toContain('the host service');
      const shown = await cp.request('GET', `/api/v1/sandboxes/${sandbox.id}/egress`, undefined, SandboxEgressInfoSchema);
      expect(shown.body.egress.allow).toEqual(['denied.test', RAW.denied]);
    },
    180_000,
  );

  it('refuses bad entries and a policy for another network with a 422', async () => {
    const bad = await cp.request('POST', '/api/v1/sandbox-specs', { image: TEST_BASE_IMAGE, network: 'allowlist', egress: { allow: ['ok.example', 'http://x', '10.0.0.0/40'], deny: [] } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('"loc":["body","egress","allow",1]');
    expect(JSON.stringify(bad.body)).toContain('"loc":["body","egress","allow",2]');
    const wrongNetwork = await cp.request('POST', '/api/v1/sandbox-specs', { image: TEST_BASE_IMAGE, network: 'internet', egress: { allow: ['github.com'], deny: [] } });
    expect(wrongNetwork.status).toBe(422);
  });
});
