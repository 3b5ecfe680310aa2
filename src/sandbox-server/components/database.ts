import { join } from 'node:path';
import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import { type DatabaseHandle, openDatabase } from '../db/client.js';
import { redactedUrl } from '../db/connection-errors.js';
import { defaultDockerUrl } from '../net/engine-address.js';
import { registerConfiguredEngines } from '../engines/register-engines.js';
import { readInstallationId } from '../installation/installation-id.js';
import { loadInstallationCa } from '../installation/installation-ca.js';
import type { CaMaterial } from '../broker/certificate-authority.js';
import { type SharedSettings, settleSettings } from '../installation/shared-settings.js';
import type { EngineIdentity } from '../services/engines/engine-identity.js';
import type { StartupReport } from '../startup-report.js';
import type { Component } from './component.js';

export interface OpenedDatabase {
  database: DatabaseHandle;
  /** Where the data is, for people: `PostgreSQL at <url without password>` or `PGlite in <dir>`. */
  name: string;
  installationId: string;
  shared: SharedSettings;
  /** The CA sandboxes trust and the egress proxy mints leaves under. */
  installationCa: CaMaterial;
}

/**
 * The database, migrated, with this installation's id, the settings replicas share settled, and the
 * engines of DOCKER_ENGINES registered.
 */
export function databaseComponent(config: SandboxServerConfig, engineIdentity: EngineIdentity, report: StartupReport, log: Logger): Component<OpenedDatabase> {
  let database: DatabaseHandle | undefined;
  return {
    name: 'database',
    async start() {
      const name = config.DATABASE_URL ? `PostgreSQL at ${redactedUrl(config.DATABASE_URL)}` : `PGlite in ${join(config.DATA_DIR, 'pglite')}`;
      report.step(`opening the database (${name}) and applying its migrations`);
      const opened = await openDatabase(
        config.DATABASE_URL
          ? { url: config.DATABASE_URL, queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_SECONDS * 1000 }
          : { pgliteDir: join(config.DATA_DIR, 'pglite') },
      );
      try {
        const installationId = await readInstallationId(opened.db);
        const shared = await settleSettings(opened.db, config, log);
        const installationCa = await loadInstallationCa(opened.db, installationId);
        report.step('registering the Docker engines');
        await registerConfiguredEngines(opened.db, config.DOCKER_ENGINES, defaultDockerUrl(process.env), engineIdentity);
        database = opened;
        return { database: opened, name, installationId, shared, installationCa };
      } catch (error) {
        await opened.close();
        throw error;
      }
    },
    stop: async () => database?.close(),
  };
}
