import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { webhookDeliveries, webhooks } from '../../../src/sandbox-server/db/schema.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { recordEvent } from '../../../src/sandbox-server/lifecycle-events/record-event.js';
import { LifecycleEventPageSchema } from '../../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { CreatedWebhookSchema, WebhookDeliveryPageSchema, WebhookDeliverySchema, WebhookSchema, type WebhookDelivery } from '../../../src/sandbox-server/models/webhook.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { WebhookDispatcher } from '../../../src/sandbox-server/webhooks/dispatcher.js';
import { logger } from '../../../src/logger.js';
import { testDrivers } from '../../helpers/database.js';
import { createWebhookTargets, type WebhookTargets } from '../../../src/sandbox-server/webhooks/targets.js';
import { ADMIN_KEY, openTestApp, resolveOnly, type TestApp } from '../harness.js';
import { downPort, type Receiver, startReceiver, verifySignature } from './receiver.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The names the tests' resolver knows; a test may change what one resolves to. */
const names = new Map<string, string>();
const resolve = resolveOnly(names);
/** As WEBHOOK_ALLOWED_HOSTS=127.0.0.1,hooks.internal would allow: the receivers listen on 127.0.0.1. */
const targets: WebhookTargets = createWebhookTargets({ allowedHosts: ['127.0.0.1', 'hooks.internal'], resolve });

describe.each(testDrivers)('webhooks (%s)', (driver) => {
  let t: TestApp;
  let feed: EventFeed;
  let dispatcher: WebhookDispatcher;
  const receivers: Receiver[] = [];

  const startDispatcher = (options: Partial<ConstructorParameters<typeof WebhookDispatcher>[0]> = {}) => {
    dispatcher = new WebhookDispatcher({ db: t.handle.db, feed, log: logger, timeoutMs: 2_000, retry: { firstRetryMs: 100, maxRetryMs: 200 }, targets, ...options });
    dispatcher.start();
  };

  beforeAll(async () => {
    t = await openTestApp(driver, { webhookTargets: targets });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.handle.db.delete(webhooks);
    await t.reset();
    names.clear();
    names.set('localhost', '127.0.0.1');
    feed = new EventFeed();
    await feed.listen(t.handle.listen);
    startDispatcher();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await dispatcher.stop();
    await feed.close();
  });

  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    const started = await startReceiver(...args);
    receivers.push(started);
    return started;
  }

  /** As an admin: the receivers are on 127.0.0.1, which only admin keys may send webhooks to. */
  async function register(url: string, eventTypes: string[] = []): Promise<{ id: string; secret: string }> {
    const { status, body } = await t.callAs(ADMIN_KEY, 'POST', '/api/v1/webhooks', { url, event_types: eventTypes }, CreatedWebhookSchema);
    expect(status).toBe(201);
    return body;
  }

  /** A status change of one sandbox, as the reconciler records it. */
  async function statusChange(sandboxId: string, status: 'RUNNING' | 'PAUSED'): Promise<void> {
    await t.handle.db.transaction((tx) =>
      recordEvent(tx, {
        type: status === 'RUNNING' ? 'sandbox.running' : 'sandbox.paused',
        subjectKind: 'sandbox',
        subjectId: sandboxId,
        sandboxId,
        previousStatus: 'STARTING',
        status,
        statusDetail: null,
      }),
    );
  }

  async function deliveries(webhookId: string): Promise<WebhookDelivery[]> {
    const { status, body } = await t.call('GET', `/api/v1/webhooks/${webhookId}/deliveries`, undefined, WebhookDeliveryPageSchema);
    expect(status).toBe(200);
    expect(WebhookDeliveryPageSchema.parse(body)).toEqual(body);
    return body.items;
  }

  describe('routes', () => {
    it('registers, shows, changes and removes a webhook; the secret is shown once', async () => {
      const created = await t.callAs(ADMIN_KEY, 'POST', '/api/v1/webhooks', { url: 'https://127.0.0.1:9/hooks', event_types: ['sandbox.running'] }, CreatedWebhookSchema);
      expect(created.status).toBe(201);
      expect(CreatedWebhookSchema.parse(created.body)).toEqual(created.body);
      expect(created.body).toMatchObject({ url: 'https://127.0.0.1:9/hooks', event_types: ['sandbox.running'], enabled: true, disabled_reason: null });
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const { id } = created.body;

      const shown = await t.call('GET', `/api/v1/webhooks/${id}`);
      expect(WebhookSchema.strict().parse(shown.body)).toEqual(shown.body);
      expect(JSON.stringify(shown.body)).not.toContain(created.body.secret);
      expect((await t.call('GET', '/api/v1/webhooks')).body).toEqual([shown.body]);

      const changed = await t.call('PATCH', `/api/v1/webhooks/${id}`, { enabled: false, event_types: [] });
      expect(changed).toMatchObject({ status: 200, body: { id, enabled: false, event_types: [] } });
      expect(await t.call('DELETE', `/api/v1/webhooks/${id}`)).toEqual({ status: 200, body: { success: true } });
      for (const [method, path] of [
        ['GET', `/api/v1/webhooks/${id}`],
        ['PATCH', `/api/v1/webhooks/${id}`],
        ['DELETE', `/api/v1/webhooks/${id}`],
        ['GET', `/api/v1/webhooks/${id}/deliveries`],
      ] as const) {
        expect(await t.call(method, path, method === 'PATCH' ? { enabled: true } : undefined)).toEqual({ status: 404, body: { detail: 'Webhook not found' } });
      }
    });

    it('accepts only http and https URLs without credentials, and known event types', async () => {
      for (const body of [
        { url: 'ftp://127.0.0.1/hooks' },
        { url: 'not a url' },
        { url: 'file:///etc/passwd' },
        { url: 'http://user:pass@127.0.0.1/hooks' },
        { url: 'http://127.0.0.1/\u0000' },
        { url: 'http://127.0.0.1/hooks', event_types: ['sandbox.exploded'] },
        { url: 'http://127.0.0.1/hooks', secret: 'mine' },
        {},
      ]) {
        const { status, body: answer } = await t.call('POST', '/api/v1/webhooks', body, ValidationErrorSchema);
        expect(status, JSON.stringify(body)).toBe(422);
        expect(answer.detail[0]).toMatchObject({ loc: expect.arrayContaining(['body']), msg: expect.any(String), type: expect.any(String) });
      }
      expect((await t.call('GET', '/api/v1/webhooks')).body).toEqual([]);
      const { id } = await register('http://127.0.0.1:9/hooks');
      expect((await t.call('PATCH', `/api/v1/webhooks/${id}`, { url: 'gopher://127.0.0.1' })).status).toBe(422);
      expect((await t.call('GET', `/api/v1/webhooks/${id}/deliveries?page_id=x`)).status).toBe(422);
      expect((await t.call('GET', '/api/v1/webhooks/%00')).status).toBe(422);
      expect((await t.call('POST', `/api/v1/webhooks/${id}/deliveries/12/redeliver`)).status).toBe(404);
    });
  });

  describe('delivery', () => {
    it('POSTs each wanted event once, signed over id, timestamp and body, and logs it', async () => {
      const hook = await receiver();
      const { id, secret } = await register(hook.url, ['sandbox.created']);
      const started = await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
      await statusChange(started.body.id, 'RUNNING');
      await vi.waitFor(async () => expect((await deliveries(id)).map((d) => d.state)).toEqual(['delivered']), { timeout: 10_000 });

      expect(hook.received).toHaveLength(1);
      const [delivery] = hook.received;
      const [event] = (await t.call('GET', '/api/v1/events/search?type=sandbox.created', undefined, LifecycleEventPageSchema)).body.items;
      expect(JSON.parse(delivery?.body ?? '')).toEqual(event);
      expect(delivery?.headers).toMatchObject({
        'content-type': 'application/json',
        'webhook-id': expect.stringMatching(/^msg_[A-Za-z0-9_-]{32}$/),
        'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
      });
      expect(Math.abs(Number(delivery?.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(verifySignature(secret, delivery?.headers ?? {}, delivery?.body ?? '')).toBe(true);
      expect(verifySignature(secret, delivery?.headers ?? {}, `${delivery?.body} `)).toBe(false);
      expect(verifySignature(`whsec_${Buffer.alloc(32).toString('base64')}`, delivery?.headers ?? {}, delivery?.body ?? '')).toBe(false);

      const [logged] = await deliveries(id);
      expect(logged).toMatchObject({ webhook_id: id, event_id: event?.id, event_type: 'sandbox.created', attempts: 1, status_code: 200, error: null, next_attempt_at: null });
      expect(logged?.latency_ms).toEqual(expect.any(Number));

      const again = await t.call('POST', `/api/v1/webhooks/${id}/deliveries/${logged?.id}/redeliver`, undefined, WebhookDeliverySchema);
      expect(again.status).toBe(202);
      await vi.waitFor(() => expect(hook.received).toHaveLength(2), { timeout: 10_000 });
      expect(hook.received[1]?.body).toBe(delivery?.body);
      expect(hook.received[1]?.headers['webhook-id']).toBe(delivery?.headers['webhook-id']);
      expect((await deliveries(id)).map((d) => d.id)).toEqual([again.body.id, logged?.id]);
    });

    it('retries a receiver that is down until it is up, then delivers each event once, in order per sandbox', async () => {
      const port = await downPort();
      const { id } = await register(`http://127.0.0.1:${port}/hooks`);
      const sandboxId = (await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body.id;
      await statusChange(sandboxId, 'RUNNING');
      await vi.waitFor(
        async () => {
          const [, first] = await deliveries(id);
          expect(first).toMatchObject({ state: 'pending', status_code: null, error: expect.stringContaining('ECONNREFUSED') });
          expect(first?.attempts).toBeGreaterThanOrEqual(2);
        },
        { timeout: 10_000 },
      );
      // The second event of the sandbox waits behind the first.
      expect((await deliveries(id))[0]).toMatchObject({ state: 'pending', attempts: 0 });

      // Up again, but the first answer is a 500: acknowledged means a 2xx.
      const hook = await receiver((_request, index, response) => {
        response.statusCode = index === 0 ? 500 : 204;
        response.end();
      }, port);
      await vi.waitFor(async () => expect((await deliveries(id)).map((d) => d.state)).toEqual(['delivered', 'delivered']), { timeout: 10_000 });
      const types = hook.received.map((r) => JSON.parse(r.body).type);
      expect(types).toEqual(['sandbox.created', 'sandbox.created', 'sandbox.running']);
      await statusChange(sandboxId, 'PAUSED');
      await vi.waitFor(() => expect(hook.received).toHaveLength(4), { timeout: 10_000 });
      expect(JSON.parse(hook.received[3]?.body ?? '').type).toBe('sandbox.paused');
      const webhook = await t.call('GET', `/api/v1/webhooks/${id}`);
      expect(webhook.body).toMatchObject({ enabled: true, disabled_reason: null });
    });

    it('does not let a slow receiver delay another webhook', async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const slow = await receiver((_request, _index, response) => void held.then(() => response.end('late')));
      const fast = await receiver();
      const slowHook = await register(slow.url);
      const fastHook = await register(fast.url);
      await t.call('POST', '/api/v1/sandboxes');
      await vi.waitFor(async () => expect((await deliveries(fastHook.id)).map((d) => d.state)).toEqual(['delivered']), { timeout: 10_000 });
      // The slow receiver has the request and has not answered it.
      expect(slow.received).toHaveLength(1);
      expect((await deliveries(slowHook.id)).map((d) => d.state)).toEqual(['pending']);
      release();
      await vi.waitFor(async () => expect((await deliveries(slowHook.id)).map((d) => d.state)).toEqual(['delivered']), { timeout: 10_000 });
    });

    it('never follows a redirect, and fails an attempt the receiver does not answer in time', async () => {
      const elsewhere = await receiver();
      const redirecting = await receiver((_request, _index, response) => {
        response.writeHead(307, { location: elsewhere.url });
        response.end();
      });
      const silent = await receiver(() => undefined);
      const redirected = await register(redirecting.url);
      const unanswered = await register(silent.url);
      await t.call('POST', '/api/v1/sandboxes');
      await vi.waitFor(
        async () => {
          const [delivery] = await deliveries(redirected.id);
          expect(delivery).toMatchObject({ state: 'pending', status_code: 307, error: 'receiver answered HTTP 307' });
          expect(delivery?.attempts).toBeGreaterThanOrEqual(2);
        },
        { timeout: 10_000 },
      );
      expect(elsewhere.received).toEqual([]);
      // The dispatcher's timeout here is 2 s.
      await vi.waitFor(
        async () => expect((await deliveries(unanswered.id))[0]).toMatchObject({ state: 'pending', error: 'no answer within 2 s' }),
        { timeout: 10_000 },
      );
    });

    it('gives up a delivery after a day and disables a webhook failing for a day, saying why', async () => {
      const { id } = await register(`http://127.0.0.1:${await downPort()}/hooks`);
      await t.handle.db.update(webhooks).set({ failingSince: new Date(Date.now() - DAY_MS - 1000) }).where(eq(webhooks.id, id));
      await dispatcher.stop();
      await t.call('POST', '/api/v1/sandboxes');
      await t.handle.db.update(webhookDeliveries).set({ createdAt: new Date(Date.now() - DAY_MS - 1000) });
      startDispatcher({ retry: { firstRetryMs: 100 } });
      await vi.waitFor(async () => expect((await deliveries(id)).map((d) => d.state)).toEqual(['failed']), { timeout: 10_000 });
      const webhook = (await t.call('GET', `/api/v1/webhooks/${id}`, undefined, WebhookSchema)).body;
      expect(webhook.enabled).toBe(false);
      expect(webhook.disabled_reason).toMatch(/^deliveries failing since \d{4}-.*; last error: ECONNREFUSED/);

      // Disabled: new events are not queued for it. Enabling clears the reason.
      await t.call('POST', '/api/v1/sandboxes');
      expect(await deliveries(id)).toHaveLength(1);
      expect((await t.call('PATCH', `/api/v1/webhooks/${id}`, { enabled: true })).body).toMatchObject({ enabled: true, disabled_reason: null });
    });
  });

  describe('targets', () => {
    it('sends a webhook to 127.0.0.1 only when WEBHOOK_ALLOWED_HOSTS names it, and then only for an admin key', async () => {
      const hook = await receiver();
      const strict = await openTestApp(driver, { webhookTargets: createWebhookTargets({ allowedHosts: [], resolve }) });
      try {
        const refused = await strict.callAs(ADMIN_KEY, 'POST', '/api/v1/webhooks', { url: hook.url }, ValidationErrorSchema);
        expect(refused).toEqual({
          status: 422,
          body: { detail: [{ loc: ['body', 'url'], msg: 'the host 127.0.0.1 resolves to a loopback address; webhooks go to public addresses only, unless WEBHOOK_ALLOWED_HOSTS names the host', type: 'value_error' }] },
        });
      } finally {
        await strict.close();
      }
      // Allowed here: an ordinary key still may not point a webhook inside the network.
      expect(await t.call('POST', '/api/v1/webhooks', { url: hook.url })).toEqual({
        status: 403,
        body: { detail: 'A webhook to a non-public address needs an admin key (SANDBOX_SERVER_ADMIN_KEYS)' },
      });
      const { id } = await register(hook.url);
      await t.call('POST', '/api/v1/sandboxes');
      await vi.waitFor(async () => expect((await deliveries(id)).map((d) => d.state)).toEqual(['delivered']), { timeout: 10_000 });
      expect(hook.received).toHaveLength(1);
    });

    it('refuses loopback, private, shared, link-local, unique-local, unspecified and multicast targets, by address or by name', async () => {
      names.set('sneaky.example', '127.0.0.2');
      names.set('metadata.example', '169.254.169.254');
      names.set('mixed.example', '10.1.2.3');
      const cases: [string, string][] = [
        ['http://localhost:9/hooks', 'the host localhost resolves to a loopback address'],
        ['http://sneaky.example/hooks', 'the host sneaky.example resolves to a loopback address'],
        ['http://metadata.example/latest/meta-data', 'the host metadata.example resolves to a link-local address'],
        ['http://mixed.example/hooks', 'the host mixed.example resolves to a private address'],
        ['http://127.1.2.3/hooks', 'the host 127.1.2.3 resolves to a loopback address'],
        ['http://[::1]:9/hooks', 'the host ::1 resolves to a loopback address'],
        ['http://[::ffff:127.0.0.1]/hooks', 'the host ::ffff:7f00:1 resolves to a loopback address'],
        ['http://10.0.0.1/hooks', 'the host 10.0.0.1 resolves to a private address'],
        ['http://192.168.1.1/hooks', 'the host 192.168.1.1 resolves to a private address'],
        ['http://172.16.0.1/hooks', 'the host 172.16.0.1 resolves to a private address'],
        ['http://100.64.0.1/hooks', 'the host 100.64.0.1 resolves to a shared address'],
        ['http://169.254.169.254/latest', 'the host 169.254.169.254 resolves to a link-local address'],
        ['http://[fe80::1]/hooks', 'the host fe80::1 resolves to a link-local address'],
        ['http://[fd00::1]/hooks', 'the host fd00::1 resolves to a unique-local address'],
        ['http://0.0.0.0/hooks', 'the host 0.0.0.0 resolves to an unspecified address'],
        ['http://224.0.0.1/hooks', 'the host 224.0.0.1 resolves to a multicast address'],
        ['http://no-such-host.example/hooks', 'the host no-such-host.example could not be resolved'],
      ];
      for (const [url, reason] of cases) {
        const { status, body } = await t.callAs(ADMIN_KEY, 'POST', '/api/v1/webhooks', { url }, ValidationErrorSchema);
        expect(status, url).toBe(422);
        expect(body.detail[0]?.msg, url).toContain(reason);
      }
      const { id } = await register('http://127.0.0.1:9/hooks');
      expect((await t.callAs(ADMIN_KEY, 'PATCH', `/api/v1/webhooks/${id}`, { url: 'http://169.254.169.254/' })).status).toBe(422);
      expect((await t.call('PATCH', `/api/v1/webhooks/${id}`, { url: 'http://127.0.0.1:10/hooks' })).status).toBe(403);
      expect((await t.call('GET', '/api/v1/webhooks', undefined)).body).toHaveLength(1);
    });

    it('sends to the address it checked: a name re-resolving to loopback is refused, without a connection, in words that tell nothing of the port', async () => {
      const hook = await receiver();
      // Public when registered, loopback when the delivery goes (DNS rebinding). The dispatcher is
      // stopped while the name resolves to the public address: nothing can be sent there.
      await dispatcher.stop();
      names.set('rebind.example', '192.88.99.200');
      const created = await t.call('POST', '/api/v1/webhooks', { url: `http://rebind.example:${hook.port}/hooks` }, CreatedWebhookSchema);
      expect(created.status).toBe(201);
      names.set('rebind.example', '127.0.0.1');
      startDispatcher();
      await t.call('POST', '/api/v1/sandboxes');
      await vi.waitFor(
        async () =>
          expect((await deliveries(created.body.id))[0]).toMatchObject({
            state: 'pending',
            status_code: null,
            latency_ms: 0,
            error: 'refused: the host rebind.example resolves to a loopback address; webhooks go to public addresses only, unless WEBHOOK_ALLOWED_HOSTS names the host',
          }),
        { timeout: 10_000 },
      );
      expect(hook.received).toEqual([]);
    });

    it('connects an allowed name to the address it resolved, keeping the name in Host', async () => {
      const hook = await receiver();
      // No system resolver knows this name: the connection can only have used the checked address.
      names.set('hooks.internal', '127.0.0.1');
      const { id } = await register(`http://hooks.internal:${hook.port}/hooks`);
      await t.call('POST', '/api/v1/sandboxes');
      await vi.waitFor(async () => expect((await deliveries(id)).map((d) => d.state)).toEqual(['delivered']), { timeout: 10_000 });
      expect(hook.received[0]?.headers.host).toBe(`hooks.internal:${hook.port}`);
    });

    it('gives each webhook its own message ids for an event', async () => {
      const first = await receiver();
      const second = await receiver();
      await register(first.url);
      await register(second.url);
      await t.call('POST', '/api/v1/sandboxes');
      await vi.waitFor(() => expect([first.received.length, second.received.length]).toEqual([1, 1]), { timeout: 10_000 });
      expect(first.received[0]?.body).toBe(second.received[0]?.body);
      expect(first.received[0]?.headers['webhook-id']).not.toBe(second.received[0]?.headers['webhook-id']);
    });
  });

  describe('concurrency', () => {
    it('does not let 20 receivers that never answer hold up a healthy one', async () => {
      await dispatcher.stop();
      // No attempt times out during the test: each silent receiver holds its request throughout.
      startDispatcher({ timeoutMs: 120_000 });
      const silent = await Promise.all(Array.from({ length: 20 }, () => receiver(() => undefined)));
      for (const dead of silent) await register(dead.url);
      const healthy = await receiver();
      const healthyHook = await register(healthy.url);
      await t.call('POST', '/api/v1/sandboxes');
      await vi.waitFor(async () => expect((await deliveries(healthyHook.id)).map((d) => d.state)).toEqual(['delivered']), { timeout: 20_000 });
      // Delivered while every dead receiver still holds its unanswered request.
      await vi.waitFor(() => expect(silent.map((dead) => dead.received.length)).toEqual(silent.map(() => 1)), { timeout: 20_000 });
    });
  });
});
