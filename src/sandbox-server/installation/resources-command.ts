import { join } from 'node:path';
import { RESOURCES_USAGE, type SandboxServerConfig } from '../config.js';
import { type DatabaseHandle, openDatabase } from '../db/client.js';
import { adoptedInstallations, engines } from '../db/schema.js';
import { dockerFor } from '../runtime/docker-for.js';
import { LEGACY_INSTALLATION } from '../reconciler/foreign-resources.js';
import { createDockerRuntime } from '../runtime/index.js';
import { type ForeignEntry, listForeignResources } from './foreign-resources.js';
import { DataDirInUseError, lockDataDir } from './data-dir-lock.js';
import { readInstallationId } from './installation-id.js';

/** Where the command writes: its answer, and its complaints. */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * `sandbox-server resources ...`: other installations' containers, volumes, networks and snapshots,
 * which the sweeps of this one report and never remove. A command of the server rather than of the
 * API: it acts on the engines and the database directly, works while no control plane runs (during
 * a move between databases), and puts no engine-wide removal behind an API key. INSTALLATION is an
 * id that `ls` shows, or `legacy` for resources of a release before the installation label.
 */
export async function runResourcesCommand(
  config: SandboxServerConfig,
  args: readonly string[],
  output: CommandOutput,
  open: (config: SandboxServerConfig) => Promise<DatabaseHandle> = openConfiguredDatabase,
): Promise<number> {
  const [verb, target, ...flags] = args;
  const known = (verb === 'ls' && target === undefined) || ((verb === 'adopt' || verb === 'rm') && target !== undefined);
  if (!known) {
    output.err(`sandbox-server: usage:\n${RESOURCES_USAGE.join('\n')}`);
    return 2;
  }
  let database: DatabaseHandle;
  try {
    database = await open(config);
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    output.err(`sandbox-server: ${error.message}; with PGlite, stop the server while \`resources\` runs`);
    return 1;
  }
  try {
    const installationId = await readInstallationId(database.db);
    if (target === installationId) {
      output.err(`sandbox-server: ${target} is this installation (its database); its resources are its own already`);
      return 2;
    }
    const rows = await database.db.select().from(engines);
    const runtimes = rows.map((row) => ({
      engine: row.name,
      runtime: createDockerRuntime({
        instanceId: config.SANDBOX_SERVER_INSTANCE,
        installationId,
        docker: dockerFor(row, config.DOCKER_TLS_CERT_DIR),
        publishHost: row.advertiseHost,
      }),
    }));
    const all = await listForeignResources(database.db, installationId, runtimes);
    const entries = target === undefined ? all : all.filter((entry) => entry.installation === target);
    if (verb === 'ls') {
      printEntries(output, installationId, entries);
      return 0;
    }
    if (verb === 'adopt') {
      await database.db.insert(adoptedInstallations).values({ installation: target as string }).onConflictDoNothing();
      output.out(
        `adopted ${target}: this installation's sweeps now treat its ${entries.length} resources as its own; ` +
          `those no row of this database claims are removed after ORPHAN_GRACE_SECONDS (${config.ORPHAN_GRACE_SECONDS} s)`,
      );
      return 0;
    }
    return await removeEntries(output, target as string, entries, flags.includes('--yes'));
  } finally {
    await database.close();
  }
}

function printEntries(output: CommandOutput, installationId: string, entries: readonly ForeignEntry[]): void {
  output.out(`this installation: ${installationId}`);
  if (entries.length === 0) {
    output.out('no resources of other installations');
    return;
  }
  const rows = [['ENGINE', 'INSTALLATION', 'KIND', 'NAME', 'OF'], ...entries.map((e) => [e.engine, e.installation, e.kind, e.name, e.owner || '-'])];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) output.out(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
  const legacy = entries.some((e) => e.installation === LEGACY_INSTALLATION);
  output.out(
    `\nThey belong to another database or data directory${legacy ? `, or (${LEGACY_INSTALLATION}) to a release before the installation label` : ''}. ` +
      'Serve that database again to use them, `sandbox-server resources adopt INSTALLATION` to let this installation sweep them, or `sandbox-server resources rm INSTALLATION --yes` to remove them.',
  );
}

async function removeEntries(output: CommandOutput, installation: string, entries: readonly ForeignEntry[], confirmed: boolean): Promise<number> {
  if (entries.length === 0) {
    output.out(`no resources of installation ${installation}`);
    return 0;
  }
  if (!confirmed) {
    for (const entry of entries) output.out(`would remove ${entry.kind} ${entry.name} on ${entry.engine}`);
    output.err(`sandbox-server: nothing removed; add --yes to remove these ${entries.length} resources (a control plane still serving installation ${installation} loses them)`);
    return 1;
  }
  let failed = 0;
  for (const entry of entries) {
    try {
      await entry.remove();
      output.out(`removed ${entry.kind} ${entry.name} on ${entry.engine}`);
    } catch (error) {
      failed++;
      output.err(`could not remove ${entry.kind} ${entry.name} on ${entry.engine}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return failed === 0 ? 0 : 1;
}

/** The configured database; a PGlite data directory is locked for the command's time (a running server refuses it). */
async function openConfiguredDatabase(config: SandboxServerConfig): Promise<DatabaseHandle> {
  if (config.DATABASE_URL) return openDatabase({ url: config.DATABASE_URL });
  const lock = await lockDataDir(config.DATA_DIR, { port: null, command: 'sandbox-server resources' });
  try {
    const handle = await openDatabase({ pgliteDir: join(config.DATA_DIR, 'pglite') });
    return {
      ...handle,
      async close() {
        await handle.close();
        await lock.release();
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}
