import { and, eq, isNotNull, ne } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sandboxes, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema, SandboxSpecPageSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { testDrivers } from '../../helpers/database.js';
import { DEFAULT_IMAGE, openTestApp, type TestApp } from '../harness.js';

const DEFAULT_SPEC = {
  id: DEFAULT_IMAGE,
  command: null,
  initial_env: {},
  secret_env: [],
  secret_hosts: {},
  working_dir: '/workspace',
  created_at: expect.stringMatching(/Z$/),
  image: DEFAULT_IMAGE,
  exposed_ports: [{ name: 'AGENT_SERVER', container_port: 8000 }],
  cpus: 1,
  memory_mb: 2048,
  pids_limit: 512,
  disk_mb: 10_240,
  runtime: 'runc',
  network: 'internet',
  egress: { allow: [], deny: [] },
  idle_pause_seconds: null,
  ttl_seconds: null,
  resume_on_access: true,
  warm_pool_size: 0,
  warm_pool_ready: 0,
  engine_labels: {},
  movable: true,
  is_default: true,
  build: null,
};

describe.each(testDrivers)('sandbox spec routes (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver);
  });
  afterAll(() => t.close());
  beforeEach(() => t.reset());

  describe('GET /api/v1/sandbox-specs/search', () => {
    it('lists the default spec', async () => {
      const { status, body } = await t.call('GET', '/api/v1/sandbox-specs/search');
      expect(status).toBe(200);
      expect(SandboxSpecPageSchema.parse(body)).toEqual(body);
      expect(body).toEqual({ items: [DEFAULT_SPEC], next_page_id: null });
    });

    it('walks every spec exactly once across pages, in id order', async () => {
      const ids = ['b/img:1', 'a', 'c', 'zz', 'd:2'];
      for (const id of ids) expect((await t.call('POST', '/api/v1/sandbox-specs', { id, image: 'busybox' })).status).toBe(201);
      const seen: string[] = [];
      let pageId: string | null = null;
      do {
        const query: string = pageId ? `limit=2&page_id=${encodeURIComponent(pageId)}` : 'limit=2';
        const { body } = await t.call('GET', `/api/v1/sandbox-specs/search?${query}`, undefined, SandboxSpecPageSchema);
        expect(body.items.length).toBeLessThanOrEqual(2);
        seen.push(...body.items.map((s) => s.id));
        pageId = body.next_page_id;
      } while (pageId);
      expect(seen).toEqual([...ids, DEFAULT_IMAGE].sort());
    });

    it('rejects a bad limit with 422', async () => {
      expect(await t.call('GET', '/api/v1/sandbox-specs/search?limit=101')).toEqual({
        status: 422,
        body: { detail: [{ loc: ['query', 'limit'], msg: 'Too big: expected number to be <=100', type: 'less_than_equal' }] },
      });
    });
  });

  describe('GET /api/v1/sandbox-specs (batch)', () => {
    it('answers in order with null for unknown ids', async () => {
      const { status, body } = await t.call('GET', `/api/v1/sandbox-specs?id=missing&id=${encodeURIComponent(DEFAULT_IMAGE)}`);
      expect(status).toBe(200);
      expect(body).toEqual([null, DEFAULT_SPEC]);
    });

    it('answers 400 for more than 100 ids', async () => {
      const query = Array.from({ length: 101 }, (_, i) => `id=s${i}`).join('&');
      expect(await t.call('GET', `/api/v1/sandbox-specs?${query}`)).toEqual({ status: 400, body: { detail: 'Too many ids: at most 100 per request' } });
    });
  });

  describe('POST /api/v1/sandbox-specs', () => {
    it("creates a spec named after its image, with defaults: the server's resource limits included", async () => {
      const { status, body } = await t.call('POST', '/api/v1/sandbox-specs', { image: 'python:3.12' });
      expect(status).toBe(201);
      expect(SandboxSpecInfoSchema.parse(body)).toEqual(body);
      expect(body).toEqual({ ...DEFAULT_SPEC, id: 'python:3.12', image: 'python:3.12', is_default: false });
      expect((await t.call('GET', '/api/v1/sandbox-specs?id=python:3.12')).body).toEqual([body]);
    });

    it('fills each limit left out from SANDBOX_DEFAULT_*, keeps those given, and has none only where null asks for none', async () => {
      const limited = await openTestApp(driver, { defaultLimits: { memoryMb: 300, pidsLimit: 40, cpus: 0.25, diskMb: 700 } });
      try {
        const specOf = async (request: Record<string, unknown>) =>
          (await limited.call('POST', '/api/v1/sandbox-specs', { image: 'img', ...request }, SandboxSpecInfoSchema)).body;
        expect(await specOf({ id: 'omitted' })).toMatchObject({ memory_mb: 300, pids_limit: 40, cpus: 0.25, disk_mb: 700 });
        expect(await specOf({ id: 'own', memory_mb: 64, disk_mb: 100 })).toMatchObject({ memory_mb: 64, pids_limit: 40, cpus: 0.25, disk_mb: 100 });
        expect(await specOf({ id: 'unlimited', memory_mb: null, pids_limit: null, cpus: null, disk_mb: null })).toMatchObject({
          memory_mb: null,
          pids_limit: null,
          cpus: null,
          disk_mb: null,
        });
        const tooSmall = await limited.call('POST', '/api/v1/sandbox-specs', { image: 'img', disk_mb: 15 }, ValidationErrorSchema);
        expect(tooSmall.body.detail[0]).toMatchObject({ loc: ['body', 'disk_mb'], type: 'greater_than_equal' });
      } finally {
        await limited.close();
      }
    }, 120_000);

    it('takes the runtime and network asked for, and refuses with 422 what the engine or the host cannot give', async () => {
      expect((await t.call('POST', '/api/v1/sandbox-specs', { id: 'gvisor', image: 'img', runtime: 'runsc' }, SandboxSpecInfoSchema)).body.runtime).toBe('runsc');
      const plainOnly = await openTestApp(driver, {
        runtimes: { available: ['io.containerd.runc.v2', 'runc'], firewallProblem: 'iptables is not installed' },
      });
      try {
        // Without its firewall rules a "none" network would reach everything: refused, not pretended.
        expect(await plainOnly.call('POST', '/api/v1/sandbox-specs', { image: 'img', network: 'none' })).toEqual({
          status: 422,
          body: {
            detail: [
              {
                loc: ['body', 'network'],
                msg: 'network "none" needs host firewall rules the control plane could not install (iptables is not installed)',
                type: 'value_error',
              },
            ],
          },
        });
        expect((await plainOnly.call('POST', '/api/v1/sandbox-specs', { image: 'img', network: 'allowlist' }, ValidationErrorSchema)).body.detail[0]?.msg).toBe(
          'network "allowlist" needs host firewall rules the control plane could not install (iptables is not installed)',
        );
        const unknownNetwork = await plainOnly.call('POST', '/api/v1/sandbox-specs', { image: 'img', network: 'host' }, ValidationErrorSchema);
        expect(unknownNetwork.body.detail[0]).toMatchObject({ loc: ['body', 'network'], type: 'enum' });
        expect((await plainOnly.call('POST', '/api/v1/sandbox-specs', { id: 'online', image: 'img', network: 'internet' }, SandboxSpecInfoSchema)).body.network).toBe('internet');
        expect(await plainOnly.call('POST', '/api/v1/sandbox-specs', { image: 'img', runtime: 'runsc' })).toEqual({
          status: 422,
          body: { detail: [{ loc: ['body', 'runtime'], msg: 'the Docker engine has no runtime "runsc" (it has: io.containerd.runc.v2, runc)', type: 'value_error' }] },
        });
        const unknown = await plainOnly.call('POST', '/api/v1/sandbox-specs', { image: 'img', runtime: 'kata' }, ValidationErrorSchema);
        expect(unknown.status).toBe(422);
        expect(unknown.body.detail[0]).toMatchObject({ loc: ['body', 'runtime'], type: 'enum' });
        expect((await plainOnly.call('POST', '/api/v1/sandbox-specs', { image: 'img' }, SandboxSpecInfoSchema)).body.runtime).toBe('runc');
      } finally {
        await plainOnly.close();
      }
      // A second database of its own: slow to create on a busy machine.
    }, 120_000);

    it('stores every field', async () => {
      const input = {
        id: 'big',
        image: 'node:20',
        command: ['node', 'server.js'],
        initial_env: { FOO: 'bar' },
        working_dir: '/srv',
        exposed_ports: [
          { name: 'AGENT_SERVER', container_port: 8000 },
          { name: 'VSCODE', container_port: 8001 },
        ],
        cpus: 1.5,
        memory_mb: 2048,
        pids_limit: 512,
        disk_mb: 4096,
        runtime: 'runsc',
        network: 'allowlist',
        egress: { allow: ['*.pypi.org', '10.1.0.0/16', 'host.sandbox.internal:11434'], deny: ['evil.pypi.org'] },
        idle_pause_seconds: 600,
        ttl_seconds: 86_400,
        resume_on_access: false,
        warm_pool_size: 3,
        engine_labels: { zone: 'a', 'example.com/gpu': 'none' },
        movable: false,
      };
      const { status, body } = await t.call('POST', '/api/v1/sandbox-specs', input);
      expect(status).toBe(201);
      expect(body).toEqual({ ...input, secret_env: [], secret_hosts: {}, created_at: expect.any(String), is_default: false, warm_pool_ready: 0, build: null });
    });

    it('stores an egress policy in its normal form, and refuses a bad entry or a policy for another network with 422', async () => {
      const egress = { allow: ['GitHub.com', 'github.com', '10.1.2.3/16', '192.0.2.7', 'files.pypi.org.'], deny: ['*.Example.com:22'] };
      const created = await t.call('POST', '/api/v1/sandbox-specs', { id: 'allowlist', image: 'img', network: 'allowlist', egress }, SandboxSpecInfoSchema);
      expect(created.body.egress).toEqual({ allow: ['github.com', '10.1.0.0/16', '192.0.2.7', 'files.pypi.org'], deny: ['*.example.com:22'] });
      const bad = await t.call('POST', '/api/v1/sandbox-specs', { image: 'img', network: 'allowlist', egress: { allow: ['ok.example', '*'], deny: ['fd00::/8'] } }, ValidationErrorSchema);
      expect(bad.body.detail.map((issue) => issue.loc)).toEqual([
        ['body', 'egress', 'allow', 1],
        ['body', 'egress', 'deny', 0],
      ]);
      expect(bad.body.detail[1]?.msg).toBe('IPv6 entries are not supported: sandbox networks are IPv4 only');
      const elsewhere = await t.call('POST', '/api/v1/sandbox-specs', { image: 'img', network: 'none', egress: { allow: ['github.com'], deny: [] } }, ValidationErrorSchema);
      expect(elsewhere.body.detail).toEqual([{ loc: ['body', 'egress'], msg: 'applies to network "allowlist" only', type: 'value_error' }]);
    });

    it('answers 409 for an id in use', async () => {
      expect((await t.call('POST', '/api/v1/sandbox-specs', { id: 'x', image: 'busybox' })).status).toBe(201);
      expect(await t.call('POST', '/api/v1/sandbox-specs', { id: 'x', image: 'alpine' })).toEqual({
        status: 409,
        body: { detail: 'Sandbox spec x already exists' },
      });
      expect(await t.call('POST', '/api/v1/sandbox-specs', { image: DEFAULT_IMAGE })).toEqual({
        status: 409,
        body: { detail: `Sandbox spec ${DEFAULT_IMAGE} already exists` },
      });
    });

    it('lets only one of two parallel creates of one id succeed', async () => {
      const answers = await Promise.all([1, 2, 3].map(() => t.call('POST', '/api/v1/sandbox-specs', { id: 'race', image: 'busybox' })));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
    });

    it('rejects bad input with 422 and writes nothing', async () => {
      const cases: [unknown, unknown[]][] = [
        [{}, [{ loc: ['body', 'image'], msg: 'give either image or build, not both and not neither', type: 'value_error' }]],
        [{ image: '' }, [{ loc: ['body', 'image'], msg: 'Too small: expected string to have >=1 characters', type: 'too_short' }]],
        [{ image: 'a b' }, [{ loc: ['body', 'image'], msg: 'must not contain spaces or control characters', type: 'regex_parsing' }]],
        [{ image: 'x', working_dir: 'rel' }, [{ loc: ['body', 'working_dir'], msg: 'must be an absolute path', type: 'starts_with_parsing' }]],
        [{ image: 'x', initial_env: { 'A-B': 'c' } }, [{ loc: ['body', 'initial_env', 'A-B'], msg: 'must be a valid environment variable name', type: 'value_error' }]],
        [{ image: 'x', initial_env: { A: 1 } }, [{ loc: ['body', 'initial_env', 'A'], msg: 'Invalid input: expected string, received number', type: 'string_type' }]],
        [{ image: 'x', memory_mb: 1.5 }, [{ loc: ['body', 'memory_mb'], msg: 'Invalid input: expected int, received number', type: 'int_type' }]],
        [{ image: 'x', warm_pool_size: -1 }, [{ loc: ['body', 'warm_pool_size'], msg: 'Too small: expected number to be >=0', type: 'greater_than_equal' }]],
        [{ image: 'x', warm_pool_size: 101 }, [{ loc: ['body', 'warm_pool_size'], msg: 'Too big: expected number to be <=100', type: 'less_than_equal' }]],
        [{ image: 'x', engine_labels: { 'a b': 'c' } }, [{ loc: ['body', 'engine_labels', 'a b'], msg: 'must be 1-63 letters, digits, ".", "_", "/" or "-", starting with a letter or digit', type: 'value_error' }]],
        [{ image: 'x', cpus: 0 }, [{ loc: ['body', 'cpus'], msg: 'Too small: expected number to be >=0.01', type: 'greater_than_equal' }]],
        [
          { image: 'x', exposed_ports: [{ name: 'A', container_port: 1 }, { name: 'A', container_port: 2 }] },
          [{ loc: ['body', 'exposed_ports'], msg: 'port names must be unique', type: 'value_error' }],
        ],
        [{ image: 'x', exposed_ports: [{ name: 'a', container_port: 70000 }] }, [
          { loc: ['body', 'exposed_ports', 0, 'name'], msg: 'must be upper case letters, digits and "_", e.g. AGENT_SERVER', type: 'regex_parsing' },
          { loc: ['body', 'exposed_ports', 0, 'container_port'], msg: 'Too big: expected number to be <=65535', type: 'less_than_equal' },
        ]],
        [{ image: 'x', colour: 'blue' }, [{ loc: ['body', 'colour'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]],
      ];
      for (const [input, detail] of cases) {
        const { status, body } = await t.call('POST', '/api/v1/sandbox-specs', input);
        expect(status, JSON.stringify(input)).toBe(422);
        expect(body, JSON.stringify(input)).toEqual({ detail });
      }
      expect((await t.call('GET', '/api/v1/sandbox-specs/search', undefined, SandboxSpecPageSchema)).body.items).toHaveLength(1);
    });
  });

  describe('DELETE /api/v1/sandbox-specs/{id}', () => {
    it('refuses while a live sandbox uses the spec, then deletes; the id can be taken again', async () => {
      await t.call('POST', '/api/v1/sandbox-specs', { id: 'repo/img:1', image: 'repo/img:1' });
      const path = `/api/v1/sandbox-specs/${encodeURIComponent('repo/img:1')}`;
      const sandbox = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'repo/img:1' }, SandboxInfoSchema);
      expect(await t.call('DELETE', path)).toEqual({ status: 409, body: { detail: 'Sandbox spec is used by 1 sandbox; delete them first' } });
      await t.call('DELETE', `/api/v1/sandboxes/${sandbox.body.id}`);
      expect(await t.call('DELETE', path)).toEqual({ status: 200, body: { success: true } });

      expect((await t.call('GET', '/api/v1/sandbox-specs?id=repo/img:1')).body).toEqual([null]);
      expect((await t.call('GET', '/api/v1/sandbox-specs/search', undefined, SandboxSpecPageSchema)).body.items.map((s) => s.id)).toEqual([DEFAULT_IMAGE]);
      expect(await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'repo/img:1' })).toEqual({ status: 404, body: { detail: 'Sandbox spec not found' } });
      expect(await t.call('DELETE', path)).toEqual({ status: 404, body: { detail: 'Sandbox spec not found' } });

      const again = await t.call('POST', '/api/v1/sandbox-specs', { id: 'repo/img:1', image: 'repo/img:2', working_dir: '/again' });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ id: 'repo/img:1', image: 'repo/img:2', working_dir: '/again', is_default: false });
    });

    it('refuses to delete the default spec and answers 404 for an unknown one', async () => {
      expect(await t.call('DELETE', `/api/v1/sandbox-specs/${encodeURIComponent(DEFAULT_IMAGE)}`)).toEqual({
        status: 409,
        body: { detail: 'The default sandbox spec cannot be deleted' },
      });
      expect(await t.call('DELETE', '/api/v1/sandbox-specs/nope')).toEqual({ status: 404, body: { detail: 'Sandbox spec not found' } });
    });

    it('never leaves a live sandbox on a deleted spec when a start and a delete race', async () => {
      for (let round = 0; round < 5; round++) {
        const id = `race-${round}`;
        await t.call('POST', '/api/v1/sandbox-specs', { id, image: 'busybox' });
        const [started, deleted] = await Promise.all([
          t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: id }),
          t.call('DELETE', `/api/v1/sandbox-specs/${id}`),
        ]);
        // Exactly one wins: the sandbox starts and the delete is refused, or the reverse.
        if (started.status === 200) expect(deleted.status).toBe(409);
        else expect([started.status, deleted.status]).toEqual([404, 200]);
      }
      const live = await t.handle.db
        .select({ id: sandboxes.id })
        .from(sandboxes)
        .innerJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
        .where(and(ne(sandboxes.desiredState, 'DELETED'), isNotNull(sandboxSpecs.deletedAt)));
      expect(live).toEqual([]);
    });
  });
});
