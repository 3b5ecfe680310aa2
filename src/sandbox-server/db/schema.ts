import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, index, integer, jsonb, pgTable, real, text, timestamp } from 'drizzle-orm/pg-core';
import { ENGINE_HEALTHS, ENGINE_STATES } from '../../contracts/engine.js';
import { DESIRED_STATES, OCI_RUNTIMES, RUNTIME_SETTINGS, SANDBOX_NETWORKS, SANDBOX_STATUSES } from '../../contracts/sandbox.js';
import type { EgressLists } from '../net/egress-policy.js';
import { START_TASK_FAILURES, START_TASK_STATUSES } from '../../contracts/start-task.js';
import { SPEC_BUILD_STATUSES } from '../../contracts/spec-build.js';
import type { LifecycleEventType, SubjectKind } from '../../contracts/lifecycle-event.js';
import { DELIVERY_STATES } from '../../contracts/webhook.js';
import type { AppConversationSecrets } from '../models/secret-hosts.js';

/** A port the sandbox's image listens on, published on its engine's advertise host under `name` (AGENT_SERVER, ...). */
export interface ExposedPort {
  name: string;
  container_port: number;
  /** Its preview URL answers anyone, with no key or token. */
  public?: boolean;
}

/**
 * The Docker engines sandboxes run on. `state` is intent (written by the API: cordon, drain);
 * `health` is observed, written only by the engine's reconciler (null until it first looks).
 */
export const engines = pgTable('engines', {
  name: text('name').primaryKey(),
  /** unix:///path, tcp://host:port or ssh://user@host, as dockerode takes them. */
  dockerUrl: text('docker_url').notNull(),
  /** Where the engine publishes sandbox ports and where clients and the proxy reach them. */
  advertiseHost: text('advertise_host').notNull(),
  /** Live sandboxes (warm-pool members included) placed on it, at most; null for no limit. */
  maxSandboxes: integer('max_sandboxes'),
  /** Matched by the `engine_labels` constraints of specs. */
  labels: jsonb('labels').$type<Record<string, string>>().notNull().default({}),
  state: text('state', { enum: ENGINE_STATES }).notNull().default('ACTIVE'),
  health: text('health', { enum: ENGINE_HEALTHS }),
  healthDetail: text('health_detail'),
  lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }),
  /** Sandboxes a drain moved off it to other engines, counted in each move's transaction (the drain's progress). */
  movedSandboxes: integer('moved_sandboxes').notNull().default(0),
  /**
   * Who the dockerd is (engines/docker-identity.ts), when it answered at registration: unique, so
   * that two rows never drive one dockerd (each would remove the other's containers as orphans).
   */
  dockerIdentity: text('docker_identity').unique(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export type EngineRow = typeof engines.$inferSelect;

/** Templates sandboxes are started from. The default one runs our agent-server image. */
export const sandboxSpecs = pgTable('sandbox_specs', {
  id: text('id').primaryKey(),
  image: text('image').notNull(),
  command: jsonb('command').$type<string[] | null>(),
  initialEnv: jsonb('initial_env').$type<Record<string, string>>().notNull().default({}),
  /** Names of initial_env entries that are secret: write-only through the API. */
  secretEnv: jsonb('secret_env').$type<string[]>().notNull().default([]),
  /** Brokered secret_env entries: name -> the hosts the egress proxy puts the value in requests to; the sandbox holds a placeholder. */
  secretHosts: jsonb('secret_hosts').$type<Record<string, string[]>>().notNull().default({}),
  workingDir: text('working_dir').notNull(),
  exposedPorts: jsonb('exposed_ports').$type<ExposedPort[]>().notNull(),
  cpus: real('cpus'),
  memoryMb: integer('memory_mb'),
  pidsLimit: integer('pids_limit'),
  /** Most MB its sandbox's writable layer and data volume may hold together; null: no limit. */
  diskMb: integer('disk_mb'),
  /** The engine's OCI runtime for the spec's containers (our extension); rows from before it ran runc. */
  runtime: text('runtime', { enum: OCI_RUNTIMES }).notNull().default('runc'),
  /** What its sandboxes' own networks reach (our extension); rows from before it reached the internet. */
  network: text('network', { enum: SANDBOX_NETWORKS }).notNull().default('internet'),
  /** What its `allowlist` sandboxes may reach (net/egress-policy.ts entries, normalized). */
  egress: jsonb('egress').$type<EgressLists>().notNull().default({ allow: [], deny: [] }),
  /** Pause a RUNNING sandbox after this long without activity (our extension). */
  idlePauseSeconds: integer('idle_pause_seconds'),
  /** Delete a sandbox this long after it was created (our extension). */
  ttlSeconds: integer('ttl_seconds'),
  /** Resume a paused sandbox when it is accessed through the proxy. */
  resumeOnAccess: boolean('resume_on_access').notNull().default(true),
  /** Labels an engine must carry (all of them, same values) to run this spec's sandboxes (our extension). */
  engineLabels: jsonb('engine_labels').$type<Record<string, string>>().notNull().default({}),
  /** A drain may move its sandboxes to another engine by snapshot (our extension); false keeps them where they are until deleted. */
  movable: boolean('movable').notNull().default(true),
  /** How many ready sandboxes the reconciler keeps for this spec, for starts to claim (our extension). */
  warmPoolSize: integer('warm_pool_size').notNull().default(0),
  /**
   * The fingerprint (warm-pool/fingerprint.ts) a member must carry to be claimed, written by the
   * reconciler when it checks the pool; null until then. Kept here rather than in memory so that
   * every replica's starts claim by it, whichever replica reconciles.
   */
  warmPoolFingerprint: text('warm_pool_fingerprint'),
  isDefault: boolean('is_default').notNull().default(false),
  /** A spec built from a Dockerfile (our extension): its build's state; null for a spec naming an image. */
  buildStatus: text('build_status', { enum: SPEC_BUILD_STATUSES }),
  /** Why its build failed. */
  buildDetail: text('build_detail'),
  /** Its image was already built from the same Dockerfile and context: nothing was built. */
  buildCached: boolean('build_cached').notNull().default(false),
  buildStartedAt: timestamp('build_started_at', { withTimezone: true, mode: 'date' }),
  buildFinishedAt: timestamp('build_finished_at', { withTimezone: true, mode: 'date' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  /**
   * Deleting a spec only sets this: deleted sandboxes keep their rows (see below), and those rows
   * still reference the spec. A deleted spec is gone from the API; creating one with its id revives it.
   */
  deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
});

/**
 * The log of a spec's image build, appended as the build goes (so that any replica can follow it)
 * and kept after it. `updatedAt` is the building replica's heartbeat: a build it stopped renewing
 * is one whose control plane went away.
 */
export const specBuildLogs = pgTable('spec_build_logs', {
  specId: text('spec_id')
    .primaryKey()
    .references(() => sandboxSpecs.id, { onDelete: 'cascade' }),
  log: text('log').notNull().default(''),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/**
 * One row per sandbox. Intent (`desiredState`, `restartGeneration`, `sessionApiKey`) is written by
 * API handlers; everything observed (`status`, `statusDetail`, `containerId`, `hostPorts`,
 * `observedGeneration`, `agentServerVersion`) is written only by the reconciler.
 * Deleted sandboxes keep their row (desiredState DELETED, `deletedAt` set once the container is
 * gone) so that a late Docker event or a restart never resurrects them.
 */
export const sandboxes = pgTable(
  'sandboxes',
  {
    id: text('id').primaryKey(),
    specId: text('spec_id')
      .notNull()
      .references(() => sandboxSpecs.id),
    /** The engine it was placed on; it stays there. */
    engine: text('engine')
      .notNull()
      .references(() => engines.name),
    createdByUserId: text('created_by_user_id'),
    desiredState: text('desired_state', { enum: DESIRED_STATES }).notNull(),
    status: text('status', { enum: SANDBOX_STATUSES }).notNull(),
    statusDetail: text('status_detail'),
    sessionApiKey: text('session_api_key').notNull(),
    /** Part of what signs its preview tokens (preview/preview-token.ts); replaced to revoke them all, null until then. */
    previewKey: text('preview_key'),
    containerId: text('container_id'),
    /** name -> host port on `hostAddress`, read back from docker inspect. */
    hostPorts: jsonb('host_ports').$type<Record<string, number> | null>(),
    /** Where its ports are published: its engine's advertise host, as the reconciler last published them. */
    hostAddress: text('host_address'),
    /**
     * Resuming an ERROR or MISSING sandbox raises this (with a new session key); the reconciler then
     * replaces the sandbox's containers (its data volume stays) and records it in observedGeneration.
     */
    restartGeneration: integer('restart_generation').notNull().default(0),
    observedGeneration: integer('observed_generation').notNull().default(0),
    /** The agent-server version label of the sandbox's image, as its container shows it. */
    agentServerVersion: text('agent_server_version'),
    /** The snapshot it was started from (its data volume began as the snapshot's copy); null for most. */
    snapshotId: text('snapshot_id'),
    /** The image its containers run instead of the spec's: the snapshot's. */
    image: text('image'),
    /** Its own egress policy, once changed with PATCH; null: its spec's. */
    egress: jsonb('egress').$type<EgressLists | null>(),
    lastActiveAt: timestamp('last_active_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
    /**
     * Set while the sandbox is an unclaimed warm-pool member: the fingerprint of the spec and image
     * it was made from (see warm-pool/fingerprint.ts). Members are hidden from the API until a start
     * claims one, which clears this in the same statement that hands it out.
     */
    poolFingerprint: text('pool_fingerprint'),
    /** When a start claimed it from its spec's warm pool; null for sandboxes started cold. */
    claimedAt: timestamp('claimed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('sandboxes_warm_pool_idx').on(t.specId, t.poolFingerprint).where(sql`${t.poolFingerprint} IS NOT NULL`),
    index('sandboxes_created_at_idx').on(t.createdAt, t.id),
    index('sandboxes_live_idx').on(t.status).where(sql`${t.deletedAt} IS NULL`),
    index('sandboxes_snapshot_idx').on(t.snapshotId).where(sql`${t.snapshotId} IS NOT NULL`),
    index('sandboxes_engine_live_idx').on(t.engine).where(sql`${t.deletedAt} IS NULL`),
  ],
);

/**
 * A snapshot of a sandbox: its container's files as an image and its data volume as a copy, both in
 * the engine under the snapshot's labels. The row is the claim: image and volume no row claims are
 * swept. Deleting removes the row (in the transaction of its `snapshot.deleted` event), then them.
 */
export const snapshots = pgTable(
  'snapshots',
  {
    id: text('id').primaryKey(),
    name: text('name'),
    /** The sandbox it was taken of; that sandbox may since have been deleted. */
    sandboxId: text('sandbox_id').notNull(),
    specId: text('spec_id')
      .notNull()
      .references(() => sandboxSpecs.id),
    /** The engine holding its image and volume: sandboxes started from it run there. */
    engine: text('engine')
      .notNull()
      .references(() => engines.name),
    image: text('image').notNull(),
    volume: text('volume').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('snapshots_created_at_idx').on(t.createdAt, t.id), index('snapshots_sandbox_idx').on(t.sandboxId), index('snapshots_spec_idx').on(t.specId), index('snapshots_engine_idx').on(t.engine)],
);

export type SnapshotRow = typeof snapshots.$inferSelect;

export type SandboxSpecRow = typeof sandboxSpecs.$inferSelect;
export type SandboxRow = typeof sandboxes.$inferSelect;

/**
 * The background job behind POST /api/v1/app-conversations. It lives in the database so a
 * restarted control plane picks up every task not yet READY or ERROR where it stopped.
 */
export const appConversationStartTasks = pgTable(
  'app_conversation_start_tasks',
  {
    id: text('id').primaryKey(),
    createdByUserId: text('created_by_user_id'),
    status: text('status', { enum: START_TASK_STATUSES }).notNull(),
    detail: text('detail'),
    failure: text('failure', { enum: START_TASK_FAILURES }),
    /** What the repository steps did and printed (clone, .openhands/setup.sh, skills); null before any. */
    log: text('log'),
    /** The id the conversation will have; shown as app_conversation_id once READY. */
    conversationId: text('conversation_id').notNull(),
    sandboxId: text('sandbox_id'),
    agentServerUrl: text('agent_server_url'),
    /** The request as received, without its secrets. */
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    /** Kept apart from `request` so no answer carries them; cleared once the task ends. */
    secrets: jsonb('secrets').$type<AppConversationSecrets>().notNull().default({}),
    /** The request's llm_api_key, kept apart like `secrets` until the conversation's relay route holds it. */
    llmApiKey: text('llm_api_key'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('start_tasks_created_at_idx').on(t.createdAt, t.id), index('start_tasks_status_idx').on(t.status)],
);

/** A conversation on some sandbox's agent-server; its events stay on the agent-server. */
export const appConversations = pgTable(
  'app_conversations',
  {
    id: text('id').primaryKey(),
    createdByUserId: text('created_by_user_id'),
    sandboxId: text('sandbox_id').notNull(),
    title: text('title'),
    llmModel: text('llm_model'),
    tags: jsonb('tags').$type<Record<string, string>>().notNull().default({}),
    selectedRepository: text('selected_repository'),
    selectedBranch: text('selected_branch'),
    gitProvider: text('git_provider'),
    trigger: text('trigger'),
    prNumber: jsonb('pr_number').$type<number[]>().notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('app_conversations_created_at_idx').on(t.createdAt, t.id),
    index('app_conversations_updated_at_idx').on(t.updatedAt, t.id),
    index('app_conversations_sandbox_idx').on(t.sandboxId),
  ],
);

/**
 * How the LLM relay (llm-relay/) sends on one conversation's LLM calls: the conversation's agent
 * presents `token` where its provider's key would go, and the relay sends the call to `upstream`
 * with the real key, which never enters the sandbox: the conversation's own (`apiKey`) or, when
 * null, the server's LLM_API_KEY, read at each call. Counts are what the provider said it used.
 */
export const llmRelayRoutes = pgTable(
  'llm_relay_routes',
  {
    conversationId: text('conversation_id').primaryKey(),
    sandboxId: text('sandbox_id')
      .notNull()
      .references(() => sandboxes.id, { onDelete: 'cascade' }),
    token: text('token').notNull().unique(),
    /** The provider's base URL as this host reaches it (LLM_BASE_URL, or the model's provider's public one). */
    upstream: text('upstream').notNull(),
    /** No LLM_BASE_URL was set: a call with no key at all is refused rather than sent to a public provider. */
    publicDefault: boolean('public_default').notNull(),
    apiKey: text('api_key'),
    calls: bigint('calls', { mode: 'number' }).notNull().default(0),
    inputTokens: bigint('input_tokens', { mode: 'number' }).notNull().default(0),
    outputTokens: bigint('output_tokens', { mode: 'number' }).notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('llm_relay_routes_sandbox_idx').on(t.sandboxId)],
);

export type LlmRelayRouteRow = typeof llmRelayRoutes.$inferSelect;

export type StartTaskRow = typeof appConversationStartTasks.$inferSelect;
export type AppConversationRow = typeof appConversations.$inferSelect;

/**
 * The lifecycle event log and outbox: one row per status change, written in the transaction that
 * made the change. `id` order is commit order (see lifecycle-events/record-event.ts), so a reader
 * that resumes after an id misses nothing that commits later. Rows are removed after the retention.
 */
export const lifecycleEvents = pgTable(
  'lifecycle_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    type: text('type').$type<LifecycleEventType>().notNull(),
    subjectKind: text('subject_kind').$type<SubjectKind>().notNull(),
    subjectId: text('subject_id').notNull(),
    /** The sandbox the event concerns, also for start tasks once they have one. */
    sandboxId: text('sandbox_id'),
    previousStatus: text('previous_status'),
    status: text('status'),
    statusDetail: text('status_detail'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('lifecycle_events_sandbox_idx').on(t.sandboxId, t.id), index('lifecycle_events_created_at_idx').on(t.createdAt)],
);

export type LifecycleEventRow = typeof lifecycleEvents.$inferSelect;

/** A receiver of lifecycle events. `secret` signs deliveries; it is returned once, at creation. */
export const webhooks = pgTable('webhooks', {
  id: text('id').primaryKey(),
  url: text('url').notNull(),
  /** Empty: every type. */
  eventTypes: jsonb('event_types').$type<LifecycleEventType[]>().notNull().default([]),
  enabled: boolean('enabled').notNull().default(true),
  secret: text('secret').notNull(),
  /** Why the webhook was disabled by the dispatcher (failing for a day); null when enabled by hand. */
  disabledReason: text('disabled_reason'),
  /** When deliveries started failing without a success since; null while healthy. */
  failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/**
 * The webhook outbox: one row per (webhook, event), inserted in the event's own transaction, so a
 * change and its deliveries commit together. `body` is the exact JSON sent and signed, kept so
 * that retries and redeliveries are byte-identical even after the event itself expired.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: bigint('event_id', { mode: 'number' }).notNull(),
    eventType: text('event_type').$type<LifecycleEventType>().notNull(),
    /** Deliveries with the same key (the sandbox, else the subject) go out one at a time, in id order. */
    orderingKey: text('ordering_key').notNull(),
    body: text('body').notNull(),
    state: text('state', { enum: DELIVERY_STATES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** A dispatcher is sending it until then; after a crash another may take it. */
    leasedUntil: timestamp('leased_until', { withTimezone: true, mode: 'date' }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    lastLatencyMs: integer('last_latency_ms'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('webhook_deliveries_pending_idx').on(t.webhookId, t.orderingKey, t.id).where(sql`${t.state} = 'pending'`),
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.id),
  ],
);

export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

/**
 * Who does a job only one control plane may do at a time (the reconciler of an engine, ...), until
 * when. A replica holds a lease by renewing it before it expires; another takes it over only once
 * it has expired, by the database's clock, so replicas' clocks need not agree.
 */
export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

/**
 * A sandbox the reconciler must leave alone until `expires_at` (a snapshot pauses its container and
 * must not see it unpaused), whichever replica reconciles. `acknowledged_at` is set by the first
 * reconciler pass that sees the hold: passes never overlap, so by then no pass that began before
 * the hold is still acting on the sandbox.
 */
export const sandboxHolds = pgTable('sandbox_holds', {
  sandboxId: text('sandbox_id').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  acknowledgedAt: timestamp('acknowledged_at', { withTimezone: true }),
});

/**
 * The one row naming this installation: a database and the Docker resources it made. Every
 * container, volume, network and snapshot image carries the id as a label, so that a control plane
 * on another database (another installation) sharing the engine never takes them for its own
 * leftovers. The migration that creates the table draws the id.
 */
export const installation = pgTable('installation', {
  id: text('id').primaryKey(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Other installations whose resources this one has taken over (`sandbox-server resources adopt`):
 * its sweeps treat them as its own. `legacy` stands for resources made by a release before the
 * installation label.
 */
export const adoptedInstallations = pgTable('adopted_installations', {
  installation: text('installation').primaryKey(),
  adoptedAt: timestamp('adopted_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The settings every replica on this database shares (the default spec's warm pool, the limits and
 * runtime of specs that name none), in one row. The first start writes them from its environment;
 * later starts keep them, so a replica started with other values cannot change them for all.
 * They change through PATCH /api/v1/settings, or a start with SHARED_SETTINGS_FROM_ENV=true.
 */
export const installationSettings = pgTable(
  'installation_settings',
  {
    /** Always true: the one row. */
    id: boolean('id').primaryKey().default(true),
    warmPoolSize: integer('warm_pool_size').notNull(),
    memoryMb: integer('memory_mb').notNull(),
    pidsLimit: integer('pids_limit').notNull(),
    cpus: real('cpus').notNull(),
    diskMb: integer('disk_mb').notNull(),
    runtime: text('runtime', { enum: RUNTIME_SETTINGS }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('installation_settings_one_row', sql`${t.id}`)],
);

export type InstallationSettingsRow = typeof installationSettings.$inferSelect;

/**
 * The installation's CA (broker/certificate-authority.ts), made by the first start: sandboxes trust
 * its certificate, and every replica's egress proxy mints leaves with its key, which no sandbox sees.
 */
export const installationCa = pgTable(
  'installation_ca',
  {
    /** Always true: the one row. */
    id: boolean('id').primaryKey().default(true),
    certPem: text('cert_pem').notNull(),
    keyPem: text('key_pem').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('installation_ca_one_row', sql`${t.id}`)],
);

/**
 * A conversation's brokered secrets (a StaticSecret with `hosts`): its agent holds `placeholder`,
 * the egress proxy puts `value` in requests to `hosts` from the sandbox. Removed with the sandbox.
 * A spec's brokered secrets need no row: their placeholders derive from the sandbox's session key.
 */
export const brokeredSecrets = pgTable(
  'brokered_secrets',
  {
    placeholder: text('placeholder').primaryKey(),
    sandboxId: text('sandbox_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    name: text('name').notNull(),
    value: text('value').notNull(),
    hosts: jsonb('hosts').$type<string[]>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('brokered_secrets_sandbox_idx').on(t.sandboxId)],
);

export type BrokeredSecretRow = typeof brokeredSecrets.$inferSelect;
