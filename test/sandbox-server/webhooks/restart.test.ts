import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { CreatedWebhookSchema, WebhookDeliveryPageSchema } from '../../../src/sandbox-server/models/webhook.js';
import { readAnswer, type Answer } from '../../helpers/answer.js';
import { ensureBuilt } from '../../helpers/build.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../../helpers/docker.js';
import { downPort, type Receiver, startReceiver } from './receiver.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const API_KEY = `restart-${randomBytes(12).toString('hex')}`;
const adminUrl = process.env.DATABASE_URL;

type ControlPlane = ChildProcessByStdio<null, Readable, Readable>;

/**
 * The control plane as a process of its own, on PostgreSQL, killed with SIGKILL between an event
 * and its delivery: the delivery is made by the next process, from the outbox.
 */
describe.skipIf(!adminUrl && process.env.CI !== 'true')('webhook delivery across a SIGKILL of the control plane', () => {
  const database = `test_${randomBytes(8).toString('hex')}`;
  let databaseUrl = '';
  let receiver: Receiver | undefined;
  const children: ControlPlane[] = [];
  const instanceIds: string[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    await withAdmin((sql) => sql.unsafe(`CREATE DATABASE ${database}`));
    const url = new URL(adminUrl as string);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
  }, 120_000);
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await receiver?.close();
    // The ERROR sandbox has no container, but it has its network.
    const docker = await connectDocker();
    if (docker) for (const instanceId of instanceIds) await removeInstanceResources(docker, instanceId);
    await withAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  });

  /** Starts `node dist/sandbox-server.js` and resolves with its URL once it listens. */
  async function startControlPlane(): Promise<{ child: ControlPlane; url: string }> {
    const instanceId = `restart-${randomBytes(4).toString('hex')}`;
    instanceIds.push(instanceId);
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'sandbox-server.js')], {
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        DATABASE_URL: databaseUrl,
        SANDBOX_SERVER_ADMIN_KEYS: API_KEY,
        // The receiver listens on 127.0.0.1: only an admin key may send webhooks there, and only when allowed.
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        // Present already, so nothing is built; the sandbox below names an image that is not.
        AGENT_SERVER_IMAGE: TEST_BASE_IMAGE,
        SANDBOX_SERVER_INSTANCE: instanceId,
        WEBHOOK_FIRST_RETRY_SECONDS: '1',
        SANDBOX_WARM_POOL: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const match = /"url":"(http:\/\/[^"]+)"[^\n]*sandbox-server listening/.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`control plane exited with ${code}: ${out}`)));
    });
    return { child, url };
  }

  async function call<S extends z.ZodType = z.ZodUnknown>(url: string, method: string, path: string, body?: unknown, schema?: S): Promise<Answer<z.output<S>>> {
    const headers: Record<string, string> = { authorization: `Bearer ${API_KEY}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return readAnswer(await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }), schema);
  }

  it('delivers after restart an event whose delivery had not succeeded when the process was killed', async () => {
    const port = await downPort();
    const first = await startControlPlane();
    const hook = await call(first.url, 'POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${port}/hooks`, event_types: ['sandbox.created'] }, CreatedWebhookSchema);
    expect(hook.status).toBe(201);
    // An image that does not exist: the sandbox goes ERROR without a container ever being made
    // (its network is made, and removed by afterAll).
    expect((await call(first.url, 'POST', '/api/v1/sandbox-specs', { id: 'absent', image: 'sandbox-server-test/absent:none' })).status).toBe(201);
    const sandbox = await call(first.url, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: 'absent' }, SandboxInfoSchema);
    expect(sandbox.status).toBe(200);
    await vi.waitFor(
      async () => {
        const [delivery] = (await call(first.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries`, undefined, WebhookDeliveryPageSchema)).body.items;
        expect(delivery).toMatchObject({ state: 'pending', error: expect.stringContaining('ECONNREFUSED') });
      },
      { timeout: 20_000 },
    );
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    receiver = await startReceiver(undefined, port);
    const second = await startControlPlane();
    await vi.waitFor(() => expect(receiver?.received).toHaveLength(1), { timeout: 20_000 });
    expect(JSON.parse(receiver.received[0]?.body ?? '')).toMatchObject({ type: 'sandbox.created', sandbox_id: sandbox.body.id });
    await vi.waitFor(
      async () => {
        const [delivery] = (await call(second.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries`, undefined, WebhookDeliveryPageSchema)).body.items;
        expect(delivery).toMatchObject({ state: 'delivered', status_code: 200 });
      },
      { timeout: 10_000 },
    );
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
  }, 90_000);
});

async function withAdmin(run: (sql: postgres.Sql) => Promise<unknown>): Promise<void> {
  const sql = postgres(adminUrl as string, { max: 1, onnotice: () => {} });
  try {
    await run(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
