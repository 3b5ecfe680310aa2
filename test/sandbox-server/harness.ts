import type { EngineRuntimes, SpecImages } from '../../src/sandbox-server/services/context.js';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { ne } from 'drizzle-orm';
import type { z } from 'zod';
import { createSandboxServerApp, type SandboxServerApp } from '../../src/sandbox-server/app.js';
import { EventFeed } from '../../src/sandbox-server/lifecycle-events/event-feed.js';
import type { DatabaseHandle } from '../../src/sandbox-server/db/client.js';
import type { EngineIdentity } from '../../src/sandbox-server/services/engines/engine-identity.js';
import { engines, lifecycleEvents, sandboxes, sandboxSpecs, snapshots } from '../../src/sandbox-server/db/schema.js';
import type { ReconcilerKick } from '../../src/sandbox-server/services/context.js';
import { DEFAULT_LIMITS, type DefaultLimits, ensureDefaultSandboxSpec } from '../../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { settleSharedSettings, type SharedSettings } from '../../src/sandbox-server/installation/shared-settings.js';
import { createWebhookTargets, type ResolveHost, type WebhookTargets } from '../../src/sandbox-server/webhooks/targets.js';
import { readAnswer, type Answer } from '../helpers/answer.js';
import { openTestDatabase, type TestDriver } from '../helpers/database.js';

/** A resolver that knows only these names (tests send no query to a DNS server); others are not found. */
export function resolveOnly(names: Record<string, string> | Map<string, string>): ResolveHost {
  const table = names instanceof Map ? names : new Map(Object.entries(names));
  return async (host) => {
    const address = table.get(host);
    if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
}

export const DEFAULT_IMAGE = 'sandbox-server/agent-server:test';
/** The shared settings a test database starts with (defaultLimits replaces the limits). */
export const TEST_SHARED_SETTINGS: SharedSettings = { warmPoolSize: 0, ...DEFAULT_LIMITS, runtime: 'runc' };
export const API_KEY = 'test-api-key-0123456789';
/** An admin key (SANDBOX_SERVER_ADMIN_KEYS) the test app accepts besides API_KEY, unless told otherwise. */
export const ADMIN_KEY = 'test-admin-key-0123456789';

/** A reconciler stand-in that records what it was asked to look at. */
export interface KickRecorder extends ReconcilerKick {
  readonly kicks: (string | undefined)[];
}

export function recordKicks(): KickRecorder {
  const kicks: (string | undefined)[] = [];
  return { kicks, kick: (sandboxId) => void kicks.push(sandboxId) };
}

export interface TestApp {
  app: OpenAPIHono;
  /** Attaches the app's WebSocket routes to a server listening on it. */
  injectWebSocket: SandboxServerApp['injectWebSocket'];
  handle: DatabaseHandle;
  reconciler: KickRecorder;
  /** app.request with the API key, JSON in and out; the body checked against `schema` (see readAnswer). */
  call<S extends z.ZodType = z.ZodUnknown>(method: string, path: string, body?: unknown, schema?: S): Promise<Answer<z.output<S>>>;
  /** As `call`, with another key. */
  callAs<S extends z.ZodType = z.ZodUnknown>(key: string, method: string, path: string, body?: unknown, schema?: S): Promise<Answer<z.output<S>>>;
  /** Empties the tables, recreates the default spec and leaves only the local engine, as a fresh database has. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openTestApp(
  driver: TestDriver,
  options: {
    maxRunningSandboxes?: number;
    apiKeys?: string[];
    /** Default [ADMIN_KEY]. */
    adminKeys?: string[];
    /** MAX_EVENT_STREAMS_PER_KEY. */
    maxEventStreamsPerKey?: number;
    /** Where webhooks may go; default: public addresses, and no name resolves but localhost (tests ask no DNS server). */
    webhookTargets?: WebhookTargets;
    runtimes?: EngineRuntimes;
    defaultLimits?: DefaultLimits;
    maxRequestBodyBytes?: number;
    /** Called after each kick is recorded, e.g. to stand in for a reconciler's verdict. */
    onKick?: (db: DatabaseHandle['db'], sandboxId: string | undefined) => void;
    /** Who the dockerd at each URL says it is; absent, registrations go unchecked. */
    engineIdentity?: EngineIdentity;
    /** PREVIEW_DOMAIN: host mode of preview URLs. */
    previewDomain?: string;
    /** PUBLIC_URL: where clients reach the control plane, for the links it hands out. */
    publicUrl?: string;
    /** Builds specs' images; absent, specs with a build are refused. */
    specImages?: SpecImages;
    maxSpecCreateBodyBytes?: number;
    /** Called when a service brings egress enforcement up to date (after a PATCH of a sandbox's policy). */
    applyEgress?: () => Promise<void>;
  } = {},
): Promise<TestApp> {
  const handle = await openTestDatabase(driver);
  await settleSharedSettings(handle.db, { ...TEST_SHARED_SETTINGS, ...options.defaultLimits }, true);
  await ensureDefaultSandboxSpec(handle.db, DEFAULT_IMAGE);
  const reconciler = recordKicks();
  const events = new EventFeed();
  await events.listen(handle.listen);
  const { app, injectWebSocket } = createSandboxServerApp({
    db: handle.db,
    reconciler: {
      kick(sandboxId) {
        reconciler.kick(sandboxId);
        options.onKick?.(handle.db, sandboxId);
      },
    },
    apiKeys: options.apiKeys ?? [API_KEY],
    adminKeys: options.adminKeys ?? [ADMIN_KEY],
    ...(options.maxEventStreamsPerKey !== undefined && { maxEventStreamsPerKey: options.maxEventStreamsPerKey }),
    webhookTargets: options.webhookTargets ?? createWebhookTargets({ allowedHosts: [], resolve: resolveOnly({ localhost: '127.0.0.1' }) }),
    maxRunningSandboxes: options.maxRunningSandboxes ?? 1000,
    ...(options.maxRequestBodyBytes !== undefined && { maxRequestBodyBytes: options.maxRequestBodyBytes }),
    events,
    runtimes: options.runtimes ?? { available: ['runc', 'runsc'] },
    ...(options.engineIdentity && { engineIdentity: options.engineIdentity }),
    ...(options.previewDomain && { previewDomain: options.previewDomain }),
    ...(options.publicUrl && { publicUrl: options.publicUrl }),
    ...(options.specImages && { specImages: options.specImages }),
    ...(options.maxSpecCreateBodyBytes !== undefined && { maxSpecCreateBodyBytes: options.maxSpecCreateBodyBytes }),
    ...(options.applyEgress && { applyEgress: options.applyEgress }),
  });
  const callAs: TestApp['callAs'] = async (key, method, path, body, schema) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await app.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return readAnswer(response, schema);
  };
  return {
    app,
    injectWebSocket,
    handle,
    reconciler,
    call: (method, path, body, schema) => callAs(API_KEY, method, path, body, schema),
    callAs,
    async reset() {
      await handle.db.delete(lifecycleEvents);
      await handle.db.delete(sandboxes);
      await handle.db.delete(snapshots);
      await handle.db.delete(sandboxSpecs);
      // Back to the one engine a fresh database has, as it starts.
      await handle.db.delete(engines).where(ne(engines.name, 'local'));
      await handle.db.update(engines).set({ state: 'ACTIVE', health: null, maxSandboxes: null, labels: {}, movedSandboxes: 0 });
      await ensureDefaultSandboxSpec(handle.db, DEFAULT_IMAGE);
      reconciler.kicks.length = 0;
    },
    async close() {
      await events.close();
      await handle.close();
    },
  };
}
