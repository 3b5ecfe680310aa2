import { sql } from 'drizzle-orm';
import type { RuntimeSetting } from '../../contracts/sandbox.js';
import type { Logger } from 'pino';
import type { SandboxServerConfig } from '../config.js';
import type { Database } from '../db/client.js';
import { installationSettings, type InstallationSettingsRow } from '../db/schema.js';

/** The settings every replica on one database shares, as a replica's environment states them. */
export interface SharedSettings {
  warmPoolSize: number;
  memoryMb: number;
  pidsLimit: number;
  cpus: number;
  diskMb: number;
  runtime: RuntimeSetting;
}

/** Each shared setting: the environment variable that seeds it and its name in the API. */
export const SHARED_SETTINGS: readonly { key: keyof SharedSettings; variable: string; field: string }[] = [
  { key: 'warmPoolSize', variable: 'SANDBOX_WARM_POOL', field: 'warm_pool_size' },
  { key: 'memoryMb', variable: 'SANDBOX_DEFAULT_MEMORY_MB', field: 'default_memory_mb' },
  { key: 'pidsLimit', variable: 'SANDBOX_DEFAULT_PIDS', field: 'default_pids_limit' },
  { key: 'cpus', variable: 'SANDBOX_DEFAULT_CPUS', field: 'default_cpus' },
  { key: 'diskMb', variable: 'SANDBOX_DEFAULT_DISK_MB', field: 'default_disk_mb' },
  { key: 'runtime', variable: 'SANDBOX_RUNTIME', field: 'default_runtime' },
];

/** A setting this replica's environment states otherwise than the database holds. */
export interface SettingDisagreement {
  variable: string;
  field: string;
  environment: SharedSettings[keyof SharedSettings];
  shared: SharedSettings[keyof SharedSettings];
}

export interface SettledSettings {
  settings: SharedSettings;
  /** Kept as the database holds them; empty when the environment agreed, seeded or was applied. */
  disagreements: SettingDisagreement[];
}

/** The row's settings without its bookkeeping. */
export function sharedSettingsOf(row: InstallationSettingsRow): SharedSettings {
  const { warmPoolSize, memoryMb, pidsLimit, cpus, diskMb, runtime } = row;
  return { warmPoolSize, memoryMb, pidsLimit, cpus, diskMb, runtime };
}

/**
 * Run at every start. The first start on a database writes `fromEnvironment`; `apply` (the
 * explicit start option) overwrites what is held; otherwise what is held wins and each setting
 * the environment states otherwise is returned, for the caller to warn about. Replicas starting
 * together agree: the insert is one statement and the row's key allows one.
 */
export async function settleSharedSettings(db: Database, fromEnvironment: SharedSettings, apply: boolean): Promise<SettledSettings> {
  const write = db.insert(installationSettings).values({ id: true, ...fromEnvironment });
  const [row] = apply
    ? await write.onConflictDoUpdate({ target: installationSettings.id, set: { ...fromEnvironment, updatedAt: sql`now()` } }).returning()
    : await write.onConflictDoNothing().returning();
  if (row) return { settings: sharedSettingsOf(row), disagreements: [] };
  const held = sharedSettingsOf(await readSharedSettingsRow(db));
  const disagreements = SHARED_SETTINGS.filter(({ key }) => held[key] !== fromEnvironment[key]).map(({ key, variable, field }) => ({
    variable,
    field,
    environment: fromEnvironment[key],
    shared: held[key],
  }));
  return { settings: held, disagreements };
}

/** The one line a replica logs for a setting it keeps against its environment. */
export function describeDisagreement({ variable, field, environment, shared }: SettingDisagreement): string {
  return (
    `${variable}=${environment} in this replica's environment, but the installation's shared ${field} is ${shared}: keeping ${shared} for every replica on this database; ` +
    `to change it run "sandboxctl settings set ${field}=${environment}" (PATCH /api/v1/settings) or start once with SHARED_SETTINGS_FROM_ENV=true`
  );
}

/** The row; it exists once any replica started (settleSharedSettings). */
export async function readSharedSettingsRow(db: Pick<Database, 'select'>): Promise<InstallationSettingsRow> {
  const [row] = await db.select().from(installationSettings).limit(1);
  if (!row) throw new Error('the database holds no shared settings: no control plane has started on it');
  return row;
}

/**
 * The start's part: settles the shared settings from this replica's environment (applied when
 * SHARED_SETTINGS_FROM_ENV is true) and warns once per setting it keeps against that environment.
 */
export async function settleSettings(db: Database, config: SandboxServerConfig, log: Logger): Promise<SharedSettings> {
  const fromEnvironment: SharedSettings = {
    warmPoolSize: config.SANDBOX_WARM_POOL,
    memoryMb: config.SANDBOX_DEFAULT_MEMORY_MB,
    pidsLimit: config.SANDBOX_DEFAULT_PIDS,
    cpus: config.SANDBOX_DEFAULT_CPUS,
    diskMb: config.SANDBOX_DEFAULT_DISK_MB,
    runtime: config.SANDBOX_RUNTIME,
  };
  const { settings, disagreements } = await settleSharedSettings(db, fromEnvironment, config.SHARED_SETTINGS_FROM_ENV);
  for (const disagreement of disagreements) {
    log.warn({ setting: disagreement.field, environment: disagreement.environment, shared: disagreement.shared }, describeDisagreement(disagreement));
  }
  if (config.SHARED_SETTINGS_FROM_ENV) log.info({ settings }, "SHARED_SETTINGS_FROM_ENV=true: this replica's environment is now the installation's shared settings");
  return settings;
}
