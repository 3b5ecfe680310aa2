/**
 * Keys and secrets never reach the log, even when a database query that carried them fails: the
 * control plane runs as a process over its own PostgreSQL database, a trigger makes the insert of
 * one spec fail, and its whole log is searched for that spec's initial_env token; another makes the
 * insert of one webhook fail, and the log is searched for webhook signing secrets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDrivers } from '../helpers/database.js';

const MAIN = fileURLToPath(new URL('../../src/sandbox-server/main.ts', import.meta.url));
const adminUrl = process.env.DATABASE_URL;
const API_KEY = 'log-secrets-api-key-0123456789';

// Needs PostgreSQL (a trigger); the helper fails CI when DATABASE_URL is missing.
describe.skipIf(!testDrivers.includes('postgres'))('secrets in the log', () => {
  const database = `test_${randomBytes(8).toString('hex')}`;
  let url: string;
  let dataDir: string;
  let child: ChildProcess;
  let log = '';
  let baseUrl: string;

  beforeAll(async () => {
    const admin = postgres(adminUrl!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${database}`);
    await admin.end();
    const parsed = new URL(adminUrl!);
    parsed.pathname = `/${database}`;
    url = parsed.toString();
    dataDir = await mkdtemp(join(tmpdir(), 'log-secrets-'));
    child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        DATA_DIR: dataDir,
        DATABASE_URL: url,
        SANDBOX_SERVER_ADMIN_KEYS: API_KEY,
        // The webhooks below go to 127.0.0.1 (nothing is sent: no event is recorded).
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        SANDBOX_SERVER_INSTANCE: `log-secrets-${randomBytes(4).toString('hex')}`,
        // An image that exists, so nothing is built; no sandbox is started here anyway.
        AGENT_SERVER_IMAGE: process.env.SANDBOX_BASE_IMAGE ?? 'sandbox-base:local',
        RECONCILE_INTERVAL_MS: '60000',
        SANDBOX_WARM_POOL: '0',
        LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (log += chunk));
    child.stderr!.on('data', (chunk) => (log += chunk));
    baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the control plane did not start:\n${log}`)), 30_000);
      child.stdout!.on('data', () => {
        const match = /"url":"(http:[^"]+)".*sandbox-server listening/.exec(log);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql.unsafe(`
      CREATE FUNCTION refuse_token_specs() RETURNS trigger AS $$
      BEGIN
        IF NEW.initial_env ? 'TOKEN' THEN RAISE EXCEPTION 'the test refuses this spec'; END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql;
      CREATE TRIGGER refuse_token_specs BEFORE INSERT ON sandbox_specs FOR EACH ROW EXECUTE FUNCTION refuse_token_specs();
      CREATE FUNCTION refuse_webhooks() RETURNS trigger AS $$
      BEGIN
        IF NEW.url LIKE '%/refused' THEN RAISE EXCEPTION 'the test refuses this webhook'; END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql;
      CREATE TRIGGER refuse_webhooks BEFORE INSERT ON webhooks FOR EACH ROW EXECUTE FUNCTION refuse_webhooks();
    `);
    await sql.end();
  }, 60_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await new Promise((resolve) => (child?.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    const admin = postgres(adminUrl!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('logs a failed query without its parameters', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const response = await fetch(`${baseUrl}/api/v1/sandbox-specs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'leaky', image: 'leaky:1', initial_env: { TOKEN: token } }),
    });
    expect(response.status).toBe(500);
    // The failure itself is logged, with the query, but neither the token nor the API key.
    await expect.poll(() => log, { timeout: 5000 }).toMatch(/the test refuses this spec/);
    expect(log).toMatch(/Failed query: insert into \\"sandbox_specs\\"/);
    expect(log).not.toContain(token);
    expect(log).not.toContain(API_KEY);
  });

  it('never logs a webhook signing secret: not when it is made, nor when the query carrying it fails', async () => {
    const call = (url: string) =>
      fetch(`${baseUrl}/api/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
    const created = await call('http://127.0.0.1:9/hooks');
    expect(created.status).toBe(201);
    const { secret } = (await created.json()) as { secret: string };
    expect((await call('http://127.0.0.1:9/refused')).status).toBe(500);
    await expect.poll(() => log, { timeout: 5000 }).toMatch(/the test refuses this webhook/);
    expect(log).not.toContain(secret);
    // Neither is the secret the refused insert carried, which nobody was shown.
    expect(log).not.toMatch(/whsec_/);
  });
});
