import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { Database } from '../db/client.js';
import type { EngineRegistry } from '../engines/registry.js';
import { failedProbes, type RuntimeProbes } from '../engines/runtime-probes.js';
import type { SharedSettings } from '../installation/shared-settings.js';
import { chooseDefaultRuntime } from '../runtime/default-runtime.js';
import { installFirewall } from '../runtime/firewall.js';
import { ensureDefaultSandboxSpec } from '../services/sandbox-specs/default-spec.js';
import type { StartupSummary } from '../startup-report.js';

export interface RuntimesOptions {
  config: SandboxServerConfig;
  db: Database;
  engines: EngineRegistry;
  runtimeProbes: RuntimeProbes;
  shared: SharedSettings;
  /** Whether the runtime was passed in (tests): the host's firewall is only the Docker runtime's business. */
  runtimePassedIn: boolean;
  log: Logger;
}

export interface SettledRuntimes {
  engines: StartupSummary['engines'];
  /** The runtime of specs that name none. */
  defaultRuntime: string;
  /** The runtimes specs may name (those that passed their self-test); null when the engine did not say. */
  available: string[] | null;
  /** The runtimes that failed their self-test, and why. */
  failed: Map<string, string>;
  /** Why the firewall rules could not be installed, or null. */
  firewallProblem: string | null;
}

/**
 * Asks the engines for their runtimes and self-tests the first one's, chooses the default runtime
 * (throwing when the one asked for failed), installs the host's firewall, and makes sure the
 * default spec exists.
 */
export async function settleRuntimes({ config, db, engines, runtimeProbes, shared, runtimePassedIn, log }: RuntimesOptions): Promise<SettledRuntimes> {
  const engineRuntimes = await Promise.all(
    engines.handles().map(async (handle) => ({ name: handle.row.name, dockerUrl: handle.row.dockerUrl, runtimes: await handle.runtime.runtimes().catch(() => null) })),
  );
  const [firstEngine] = engines.handles();
  const listedRuntimes = engineRuntimes[0]?.runtimes ?? null;
  const failed = failedProbes(firstEngine ? await runtimeProbes.probe(firstEngine.row.name, firstEngine.runtime) : []);
  const defaultRuntime = chooseDefaultRuntime(shared.runtime, listedRuntimes, failed);
  if (defaultRuntime.refusal) throw new Error(defaultRuntime.refusal);
  if (defaultRuntime.warning) log.warn(defaultRuntime.warning);
  // Specs may name only the runtimes that passed their self-test.
  const available = listedRuntimes?.filter((name) => !failed.has(name)) ?? null;
  const firewallProblem = runtimePassedIn ? null : await installFirewall({ allow: config.SANDBOX_INTERNET_ALLOW });
  if (firewallProblem) {
    log.warn(
      `sandboxes can reach the host: the control plane could not install its firewall rules (${firewallProblem}); ` +
        'run it as root with iptables on the host; until then specs with network "none" are refused',
    );
  }
  const { memoryMb, pidsLimit, cpus, diskMb, warmPoolSize } = shared;
  await ensureDefaultSandboxSpec(db, config.AGENT_SERVER_IMAGE, { memoryMb, pidsLimit, cpus, diskMb }, defaultRuntime.runtime, warmPoolSize);
  return { engines: engineRuntimes, defaultRuntime: defaultRuntime.runtime, available, failed, firewallProblem };
}
