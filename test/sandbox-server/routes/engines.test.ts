import { eq, ne } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engines, sandboxes, snapshots } from '../../../src/sandbox-server/db/schema.js';
import { EngineInfoSchema, EnginePageSchema } from '../../../src/sandbox-server/models/engine.js';
import { LifecycleEventPageSchema } from '../../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { ENGINES_CHANNEL } from '../../../src/sandbox-server/replicas/hand-off.js';
import { testDrivers } from '../../helpers/database.js';
import { API_KEY, openTestApp, type TestApp } from '../harness.js';

/** An ordinary key (SANDBOX_SERVER_API_KEYS); the tests' API_KEY is an admin key here. */
const USER_KEY = 'ordinary-user-key-0123456789';
const ENGINE_NOT_FOUND = { detail: 'Engine not found' };
const E1 = { name: 'e1', docker_url: 'unix:///var/run/docker-e1.sock', advertise_host: '127.0.0.2', max_sandboxes: 20, labels: { zone: 'a' } };

/** What the dockerds behind these URLs say they are: e1's socket and another path to the same dockerd. Others do not answer. */
const DOCKER_IDS: Record<string, string> = { 'unix:///var/run/docker-e1.sock': 'E1-ID', 'unix:///run/e1-again.sock': 'E1-ID' };

describe.each(testDrivers)('engine routes (%s)', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver, { apiKeys: [USER_KEY], adminKeys: [API_KEY], engineIdentity: async (dockerUrl) => DOCKER_IDS[dockerUrl] ?? null });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
  });

  async function eventsOf(name: string): Promise<{ type: string; previous_status: string | null; status: string | null }[]> {
    const { body } = await t.call('GET', '/api/v1/events/search?limit=100&sort_order=TIMESTAMP', undefined, LifecycleEventPageSchema);
    return body.items
      .filter((event) => event.subject_kind === 'engine' && event.subject_id === name)
      .map((event) => ({ type: event.type, previous_status: event.previous_status, status: event.status }));
  }

  describe('POST /api/v1/engines', () => {
    it('registers an engine, ACTIVE and not yet seen, announces it to every replica and records engine.registered', async () => {
      const announced: string[] = [];
      const unlisten = await t.handle.listen(ENGINES_CHANNEL, () => void announced.push('engines'));
      const { status, body } = await t.call('POST', '/api/v1/engines', E1, EngineInfoSchema);
      expect(status).toBe(201);
      expect(body).toEqual({
        ...E1,
        state: 'ACTIVE',
        health: null,
        health_detail: null,
        last_seen_at: null,
        sandboxes: 0,
        drain: null,
        // Its runtimes are tested once a replica adds it: not yet.
        runtimes: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      expect(await eventsOf('e1')).toEqual([{ type: 'engine.registered', previous_status: null, status: 'ACTIVE' }]);
      await expect.poll(() => announced.length).toBeGreaterThan(0);
      await unlisten();
    });

    it('takes defaults for the limit and labels, and ssh:// and tcp:// URLs', async () => {
      const ssh = await t.call('POST', '/api/v1/engines', { name: 'remote-1', docker_url: 'ssh://ops@host-2', advertise_host: 'host-2.internal' }, EngineInfoSchema);
      expect(ssh.status).toBe(201);
      expect(ssh.body).toMatchObject({ max_sandboxes: null, labels: {} });
      expect((await t.call('POST', '/api/v1/engines', { name: 'remote-2', docker_url: 'tcp://10.0.0.3:2376', advertise_host: '10.0.0.3' })).status).toBe(201);
    });

    it('answers 409 for a name already registered', async () => {
      expect((await t.call('POST', '/api/v1/engines', E1)).status).toBe(201);
      expect(await t.call('POST', '/api/v1/engines', { ...E1, docker_url: 'unix:///other.sock' })).toEqual({ status: 409, body: { detail: 'Engine e1 is already registered' } });
      expect(await t.call('POST', '/api/v1/engines', { ...E1, name: 'local' })).toEqual({ status: 409, body: { detail: 'Engine local is already registered' } });
    });

    it('answers 409 naming the engine for a dockerd already registered under another name, and registers unchecked one that does not answer', async () => {
      expect((await t.call('POST', '/api/v1/engines', E1)).status).toBe(201);
      expect(await t.call('POST', '/api/v1/engines', { ...E1, name: 'e1-again', docker_url: 'unix:///run/e1-again.sock' })).toEqual({
        status: 409,
        body: { detail: "Engine e1-again is the Docker engine already registered as e1 (E1-ID); two engines on one dockerd would remove each other's containers as orphans" },
      });
      expect(await eventsOf('e1-again')).toEqual([]);
      expect((await t.call('POST', '/api/v1/engines', { ...E1, name: 'quiet', docker_url: 'unix:///run/quiet.sock' })).status).toBe(201);
      // Once e1 is gone, its dockerd may be registered under another name.
      expect((await t.call('DELETE', '/api/v1/engines/e1')).status).toBe(200);
      expect((await t.call('POST', '/api/v1/engines', { ...E1, name: 'e1-again', docker_url: 'unix:///run/e1-again.sock' })).status).toBe(201);
    });

    it('rejects bad input with 422 and registers nothing', async () => {
      const cases: [unknown, unknown[]][] = [
        [{}, [
          { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
          { loc: ['body', 'docker_url'], msg: 'Field required', type: 'missing' },
          { loc: ['body', 'advertise_host'], msg: 'Field required', type: 'missing' },
        ]],
        [{ ...E1, name: 'E_1' }, [{ loc: ['body', 'name'], msg: 'must be 1-40 lower-case letters, digits and inner dashes', type: 'regex_parsing' }]],
        [{ ...E1, docker_url: 'http://host:2375' }, [{ loc: ['body', 'docker_url'], msg: 'must be unix:///path, tcp://host:port or ssh://[user@]host[:port]', type: 'regex_parsing' }]],
        [{ ...E1, docker_url: 'tcp://host' }, [{ loc: ['body', 'docker_url'], msg: 'must be unix:///path, tcp://host:port or ssh://[user@]host[:port]', type: 'regex_parsing' }]],
        [{ ...E1, advertise_host: 'http://127.0.0.2' }, [{ loc: ['body', 'advertise_host'], msg: 'must be a host name or address, without scheme or port', type: 'regex_parsing' }]],
        [{ ...E1, max_sandboxes: 0 }, [{ loc: ['body', 'max_sandboxes'], msg: 'Too small: expected number to be >=1', type: 'greater_than_equal' }]],
        [{ ...E1, labels: { 'bad key': 'x' } }, [{ loc: ['body', 'labels', 'bad key'], msg: 'must be 1-63 letters, digits, ".", "_", "/" or "-", starting with a letter or digit', type: 'value_error' }]],
        [{ ...E1, state: 'CORDONED' }, [{ loc: ['body', 'state'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]],
        // A port no connection can use: the engine's every call would fail, and its sandboxes wait forever.
        [{ ...E1, docker_url: 'tcp://127.0.0.1:99999' }, [{ loc: ['body', 'docker_url'], msg: 'port 99999 is not between 1 and 65535', type: 'value_error' }]],
        [{ ...E1, docker_url: 'tcp://127.0.0.1:0' }, [{ loc: ['body', 'docker_url'], msg: 'port 0 is not between 1 and 65535', type: 'value_error' }]],
        [{ ...E1, docker_url: 'ssh://ops@host-2:65536' }, [{ loc: ['body', 'docker_url'], msg: 'port 65536 is not between 1 and 65535', type: 'value_error' }]],
        [{ ...E1, docker_url: 'tcp://169.254.169.254:2375' }, [{ loc: ['body', 'docker_url'], msg: 'host 169.254.169.254 is link-local', type: 'value_error' }]],
        // The proxy would send session keys and requests to a cloud's metadata service.
        [{ ...E1, advertise_host: '169.254.169.254' }, [{ loc: ['body', 'advertise_host'], msg: '169.254.169.254 is link-local', type: 'value_error' }]],
        [{ ...E1, advertise_host: '[fe80::1]' }, [{ loc: ['body', 'advertise_host'], msg: '[fe80::1] is link-local', type: 'value_error' }]],
        [{ ...E1, advertise_host: '0.0.0.0' }, [{ loc: ['body', 'advertise_host'], msg: '0.0.0.0 is unspecified', type: 'value_error' }]],
        [{ ...E1, advertise_host: '224.0.0.1' }, [{ loc: ['body', 'advertise_host'], msg: '224.0.0.1 is multicast', type: 'value_error' }]],
      ];
      for (const [body, detail] of cases) {
        expect(await t.call('POST', '/api/v1/engines', body), JSON.stringify(body)).toEqual({ status: 422, body: { detail } });
      }
      expect((await t.handle.db.select().from(engines)).map((row) => row.name)).toEqual(['local']);
    });
  });

  describe('GET /api/v1/engines', () => {
    it('lists engines by name with their live sandboxes, pages, and filters by name', async () => {
      for (const name of ['e2', 'e1']) expect((await t.call('POST', '/api/v1/engines', { ...E1, name, docker_url: `unix:///var/run/docker-${name}.sock` })).status).toBe(201);
      await t.handle.db.update(engines).set({ state: 'CORDONED' }).where(ne(engines.name, 'e1'));
      expect((await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body.engine).toBe('e1');

      const all = await t.call('GET', '/api/v1/engines', undefined, EnginePageSchema);
      expect(all.status).toBe(200);
      expect(all.body.items.map((e) => [e.name, e.sandboxes])).toEqual([['e1', 1], ['e2', 0], ['local', 0]]);
      expect(all.body.next_page_id).toBeNull();

      const first = await t.call('GET', '/api/v1/engines?limit=2', undefined, EnginePageSchema);
      expect(first.body.items.map((e) => e.name)).toEqual(['e1', 'e2']);
      expect(first.body.next_page_id).toBe('local');
      const second = await t.call('GET', `/api/v1/engines?limit=2&page_id=${first.body.next_page_id}`);
      expect(second.body).toMatchObject({ items: [{ name: 'local' }], next_page_id: null });

      expect((await t.call('GET', '/api/v1/engines?name=e2', undefined, EnginePageSchema)).body.items.map((e) => e.name)).toEqual(['e2']);
      expect((await t.call('GET', '/api/v1/engines?name=nope')).body).toEqual({ items: [], next_page_id: null });
    });

    it('rejects bad queries with 422', async () => {
      expect(await t.call('GET', '/api/v1/engines?page_id=unknown')).toEqual({
        status: 422,
        body: { detail: [{ loc: ['query', 'page_id'], msg: 'Unknown page_id', type: 'value_error' }] },
      });
      expect((await t.call('GET', '/api/v1/engines?limit=0')).status).toBe(422);
    });
  });

  describe('cordon and uncordon', () => {
    it('stop and restart placement on the engine, each change once with its event', async () => {
      expect((await t.call('POST', '/api/v1/engines', E1)).status).toBe(201);
      await t.call('POST', '/api/v1/engines/local/cordon');

      const cordoned = await t.call('POST', '/api/v1/engines/e1/cordon');
      expect(cordoned).toEqual({ status: 200, body: expect.objectContaining({ name: 'e1', state: 'CORDONED' }) });
      expect((await t.call('POST', '/api/v1/engines/e1/cordon', undefined, EngineInfoSchema)).body.state).toBe('CORDONED');
      expect(await t.call('POST', '/api/v1/sandboxes')).toEqual({
        status: 503,
        body: { detail: 'no engine can take a new sandbox: e1 is cordoned; local is cordoned' },
      });

      expect(await t.call('POST', '/api/v1/engines/e1/uncordon')).toEqual({ status: 200, body: expect.objectContaining({ state: 'ACTIVE' }) });
      expect((await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body.engine).toBe('e1');
      expect(await eventsOf('e1')).toEqual([
        { type: 'engine.registered', previous_status: null, status: 'ACTIVE' },
        { type: 'engine.cordoned', previous_status: 'ACTIVE', status: 'CORDONED' },
        { type: 'engine.uncordoned', previous_status: 'CORDONED', status: 'ACTIVE' },
      ]);
    });

    it('answer 404 for an unknown engine, and cordon 409 for a draining one (uncordon ends the drain)', async () => {
      expect(await t.call('POST', '/api/v1/engines/nope/cordon')).toEqual({ status: 404, body: ENGINE_NOT_FOUND });
      expect(await t.call('POST', '/api/v1/engines/nope/uncordon')).toEqual({ status: 404, body: ENGINE_NOT_FOUND });
      await t.handle.db.update(engines).set({ state: 'DRAINING' }).where(eq(engines.name, 'local'));
      expect(await t.call('POST', '/api/v1/engines/local/cordon')).toEqual({ status: 409, body: { detail: 'Engine local is DRAINING' } });
      expect((await t.call('POST', '/api/v1/engines/local/uncordon', undefined, EngineInfoSchema)).body.state).toBe('ACTIVE');
    });
  });

  describe('DELETE /api/v1/engines/{name}', () => {
    it('answers 409 while a live sandbox or a snapshot is on it, then removes it with engine.removed', async () => {
      expect((await t.call('POST', '/api/v1/engines', E1)).status).toBe(201);
      await t.call('POST', '/api/v1/engines/local/cordon');
      const sandbox = (await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body;
      expect(sandbox.engine).toBe('e1');

      expect(await t.call('DELETE', '/api/v1/engines/e1')).toEqual({ status: 409, body: { detail: 'Engine e1 still has sandboxes; delete or move them first' } });
      // Deleted, but not yet removed by its reconciler: still live on the engine.
      expect((await t.call('DELETE', `/api/v1/sandboxes/${sandbox.id}`)).status).toBe(200);
      expect((await t.call('DELETE', '/api/v1/engines/e1')).status).toBe(409);
      await t.handle.db.update(sandboxes).set({ deletedAt: new Date() }).where(eq(sandboxes.id, sandbox.id));

      await t.handle.db.insert(snapshots).values({ id: 'snap', sandboxId: sandbox.id, specId: sandbox.sandbox_spec_id, engine: 'e1', image: 'i', volume: 'v', sizeBytes: 1 });
      expect(await t.call('DELETE', '/api/v1/engines/e1')).toEqual({ status: 409, body: { detail: 'Engine e1 still holds snapshots; delete them first' } });
      await t.handle.db.delete(snapshots);

      expect(await t.call('DELETE', '/api/v1/engines/e1')).toEqual({ status: 200, body: { success: true } });
      expect((await t.call('GET', '/api/v1/engines?name=e1', undefined, EnginePageSchema)).body.items).toEqual([]);
      expect(await t.handle.db.select().from(sandboxes).where(eq(sandboxes.engine, 'e1'))).toEqual([]);
      expect(await eventsOf('e1')).toContainEqual({ type: 'engine.removed', previous_status: 'ACTIVE', status: null });
      expect(await t.call('DELETE', '/api/v1/engines/e1')).toEqual({ status: 404, body: ENGINE_NOT_FOUND });
    });
  });

  it('needs the API key', async () => {
    const response = await t.app.request('/api/v1/engines');
    expect(response.status).toBe(401);
  });

  it('lets an ordinary key list engines but answers it 403 on every change, which an admin key makes', async () => {
    expect((await t.callAs(USER_KEY, 'GET', '/api/v1/engines', undefined, EnginePageSchema)).status).toBe(200);
    const refused = { status: 403, body: { detail: 'Changing the engines needs an admin key (SANDBOX_SERVER_ADMIN_KEYS)' } };
    // The attack: an engine of the caller's own, which new sandboxes (and their secrets) would be placed on.
    expect(await t.callAs(USER_KEY, 'POST', '/api/v1/engines', { ...E1, name: 'fake', docker_url: 'tcp://127.0.0.1:2375' })).toEqual(refused);
    for (const [method, path] of [
      ['POST', '/api/v1/engines/local/cordon'],
      ['POST', '/api/v1/engines/local/uncordon'],
      ['POST', '/api/v1/engines/local/drain'],
      ['DELETE', '/api/v1/engines/local'],
    ] as const) {
      expect(await t.callAs(USER_KEY, method, path), `${method} ${path}`).toEqual(refused);
    }
    const [local] = await t.handle.db.select().from(engines);
    expect(await t.handle.db.select({ name: engines.name }).from(engines)).toEqual([{ name: 'local' }]);
    expect(local?.state).toBe('ACTIVE');
    expect((await t.call('POST', '/api/v1/engines', E1)).status).toBe(201);
    expect((await t.call('POST', '/api/v1/engines/e1/drain', undefined, EngineInfoSchema)).body.state).toBe('DRAINING');
    expect((await t.call('DELETE', '/api/v1/engines/e1')).status).toBe(200);
  });
});
