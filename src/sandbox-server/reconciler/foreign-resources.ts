import type { ForeignResourceCounts, SandboxMetrics } from '../../http/metrics/index.js';
import type { Logger } from '../../logger.js';
import type { Owned } from '../runtime/runtime.js';

/** How a resource of a release before the installation label is named: in logs, metrics and `sandbox-server resources`. */
export const LEGACY_INSTALLATION = 'legacy';

/** The installation a resource says it belongs to. */
export function installationOf(resource: Owned): string {
  return resource.installation ?? LEGACY_INSTALLATION;
}

export type ResourceKind = 'container' | 'network' | 'volume' | 'volume-copy' | 'snapshot';

/** A resource of another installation that a sweep found unclaimed and left alone. */
export interface ForeignResource {
  kind: ResourceKind;
  /** Its name or id on the engine. */
  name: string;
  installation: string;
}

/**
 * Which resources are this installation's: those carrying its id, and those of the installations it
 * adopted. A runtime without an installation id (tests of the reconciler alone) owns what carries none.
 */
export class Ownership {
  #adopted: ReadonlySet<string> = new Set();

  constructor(private readonly installationId: string | undefined) {}

  /** The installations adopted (`sandbox-server resources adopt`), as read from the database. */
  adopt(installations: ReadonlySet<string>): void {
    this.#adopted = installations;
  }

  owns(resource: Owned): boolean {
    const installation = installationOf(resource);
    return installation === (this.installationId ?? LEGACY_INSTALLATION) || this.#adopted.has(installation);
  }
}

/**
 * Tells of other installations' resources once: a warning the first time this process sees each,
 * and the `sandbox_server_foreign_resources` gauge, kept to what the last sweep of each kind found.
 */
export class ForeignResourceReport {
  readonly #current = new Map<ResourceKind, readonly ForeignResource[]>();
  readonly #reported = new Set<string>();

  constructor(
    private readonly engine: string,
    private readonly log: Logger,
    private readonly metrics: SandboxMetrics | undefined,
  ) {}

  /** What a sweep of `kinds` found; replaces what earlier sweeps found of those kinds. */
  found(kinds: readonly ResourceKind[], resources: readonly ForeignResource[]): void {
    for (const kind of kinds) this.#current.set(kind, resources.filter((resource) => resource.kind === kind));
    const fresh = resources.filter((resource) => !this.#reported.has(`${resource.kind}/${resource.name}`));
    for (const resource of fresh) this.#reported.add(`${resource.kind}/${resource.name}`);
    for (const [installation, ofIt] of groupBy(fresh, (resource) => resource.installation)) {
      this.log.warn(
        { installation, resources: ofIt.map((resource) => `${resource.kind} ${resource.name}`) },
        installation === LEGACY_INSTALLATION
          ? 'left alone: resources of a release before the installation label, which no row of this database claims; adopt or remove them with `sandbox-server resources`'
          : 'left alone: resources of another installation (another database or data directory), which no row of this database claims; adopt or remove them with `sandbox-server resources`',
      );
    }
    this.metrics?.setForeignResources(this.engine, this.counts());
  }

  private counts(): ForeignResourceCounts {
    const all = [...this.#current.values()].flat();
    return [...groupBy(all, (resource) => `${resource.installation}\n${resource.kind}`)].map(([key, ofIt]) => {
      const [installation = '', kind = ''] = key.split('\n');
      return { installation, kind, count: ofIt.length };
    });
  }
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}
