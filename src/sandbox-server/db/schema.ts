import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, real, text, timestamp } from 'drizzle-orm/pg-core';

/** A port the sandbox's image listens on, published on 127.0.0.1 under `name` (AGENT_SERVER, ...). */
export interface ExposedPort {
  name: string;
  container_port: number;
}

/** Templates sandboxes are started from. The default one runs our agent-server image. */
export const sandboxSpecs = pgTable('sandbox_specs', {
  id: text('id').primaryKey(),
  image: text('image').notNull(),
  command: jsonb('command').$type<string[] | null>(),
  initialEnv: jsonb('initial_env').$type<Record<string, string>>().notNull().default({}),
  workingDir: text('working_dir').notNull(),
  exposedPorts: jsonb('exposed_ports').$type<ExposedPort[]>().notNull(),
  cpus: real('cpus'),
  memoryMb: integer('memory_mb'),
  pidsLimit: integer('pids_limit'),
  /** Pause a RUNNING sandbox after this long without activity (our extension). */
  idlePauseSeconds: integer('idle_pause_seconds'),
  /** Delete a sandbox this long after it was created (our extension). */
  ttlSeconds: integer('ttl_seconds'),
  /** Resume a paused sandbox when it is accessed through the proxy. */
  resumeOnAccess: boolean('resume_on_access').notNull().default(true),
  isDefault: boolean('is_default').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export type DesiredState = 'RUNNING' | 'PAUSED' | 'DELETED';
export type SandboxStatus = 'STARTING' | 'RUNNING' | 'PAUSED' | 'ERROR' | 'MISSING';

/**
 * One row per sandbox. Intent (`desiredState`) is written by API handlers; everything observed
 * (`status`, `statusDetail`, `containerId`, `hostPorts`) is written only by the reconciler.
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
    createdByUserId: text('created_by_user_id'),
    desiredState: text('desired_state').$type<DesiredState>().notNull(),
    status: text('status').$type<SandboxStatus>().notNull(),
    statusDetail: text('status_detail'),
    sessionApiKey: text('session_api_key').notNull(),
    containerId: text('container_id'),
    /** name -> host port on 127.0.0.1, read back from docker inspect. */
    hostPorts: jsonb('host_ports').$type<Record<string, number> | null>(),
    lastActiveAt: timestamp('last_active_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('sandboxes_created_at_idx').on(t.createdAt, t.id),
    index('sandboxes_live_idx').on(t.status).where(sql`${t.deletedAt} IS NULL`),
  ],
);

export type SandboxSpecRow = typeof sandboxSpecs.$inferSelect;
export type SandboxRow = typeof sandboxes.$inferSelect;
