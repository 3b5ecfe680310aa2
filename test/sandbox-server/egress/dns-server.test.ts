import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressDns } from '../../../src/sandbox-server/egress/dns-server.js';
import { egressRulesOf } from '../../../src/sandbox-server/net/egress-policy.js';
import type { EgressDenial } from '../../../src/sandbox-server/egress/proxy.js';

const GATEWAY = '10.213.9.1';

/** A standard query for `name`'s A records, as a resolver sends it. */
function queryFor(name: string, id: number): Buffer {
  const labels = name.split('.').map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)]));
  const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

describe('the egress resolver', () => {
  let dns: EgressDns;
  let resolver: Resolver;
  let port: number;
  const denials: EgressDenial[] = [];
  const rules = egressRulesOf({ allow: ['github.com', '*.pypi.org', 'host.sandbox.internal:11434'], deny: ['evil.pypi.org'] });

  beforeAll(async () => {
    dns = new EgressDns({ identify: (address) => (address === '127.0.0.1' ? { sandboxId: 'sbx-1', rules, gateway: GATEWAY } : undefined), onDenied: (d) => denials.push(d) });
    port = await dns.listen('127.0.0.1', 0);
    resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
  });
  afterAll(() => dns?.close());

  it('answers an allowed name, and the host when a port of it is allowed, with the gateway the proxy listens on', async () => {
    expect(await resolver.resolve4('github.com')).toEqual([GATEWAY]);
    expect(await resolver.resolve4('Files.PyPI.org')).toEqual([GATEWAY]);
    expect(await resolver.resolve4('host.sandbox.internal')).toEqual([GATEWAY]);
  });

  it('refuses a name the policy does not allow, and each query of a tunnel through a denied domain, counting every one', async () => {
    const before = denials.length;
    await expect(resolver.resolve4('example.com')).rejects.toMatchObject({ code: 'EREFUSED' });
    await expect(resolver.resolve4('evil.pypi.org')).rejects.toMatchObject({ code: 'EREFUSED' });
    const chunks = Array.from({ length: 5 }, () => randomBytes(20).toString('hex'));
    for (const chunk of chunks) await expect(resolver.resolve4(`${chunk}.tunnel.example.net`)).rejects.toMatchObject({ code: 'EREFUSED' });
    expect(denials.slice(before).map((d) => d.target)).toEqual(['example.com', 'evil.pypi.org', ...chunks.map((chunk) => `${chunk}.tunnel.example.net`)]);
    expect(denials.slice(before).every((d) => d.via === 'dns' && d.sandboxId === 'sbx-1')).toBe(true);
  });

  it('refuses whoever is no sandbox it knows without counting it', async () => {
    const before = denials.length;
    // The answer goes to 127.0.0.1 either way; the question is asked from another loopback address.
    const answer = dns.answer(queryFor('github.com', 7), '127.0.0.9');
    expect(answer[3]! & 0xf).toBe(5);
    expect(denials.length).toBe(before);
  });

  it('answers over TCP too', async () => {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const query = queryFor('github.com', 0x4242);
    socket.write(Buffer.concat([Buffer.from([0, query.length]), query]));
    const [data] = (await once(socket, 'data')) as [Buffer];
    socket.destroy();
    const answer = data.subarray(2);
    expect(answer.readUInt16BE(0)).toBe(0x4242);
    expect(answer.readUInt16BE(6)).toBe(1);
    expect([...answer.subarray(answer.length - 4)].join('.')).toBe(GATEWAY);
  });
});
