import { Gauge, type Registry } from 'prom-client';
import type { LeaseKeeper } from './lease-keeper.js';

/**
 * `sandbox_server_lease_held{lease}`: 1 on the replica doing the lease's job, 0 on the others.
 * `keepers` is read at each scrape: engines registered at run time bring leases of their own.
 */
export function registerLeaseMetrics(registry: Registry, keepers: () => Record<string, LeaseKeeper>): void {
  new Gauge({
    name: 'sandbox_server_lease_held',
    help: 'Whether this replica holds the lease (and does its job, e.g. reconciling an engine)',
    labelNames: ['lease'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [lease, keeper] of Object.entries(keepers())) this.set({ lease }, keeper.held ? 1 : 0);
    },
  });
}
