import { Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/client.js';
import { engines } from '../db/schema.js';
import { toEngineInfos } from '../services/engines/engine-view.js';

/**
 * `sandbox_server_engine_up{engine}`: 1 while the engine's reconciler last found it answering, 0
 * when unreachable or not yet seen; `sandbox_server_engine_sandboxes{engine}`: live sandboxes placed
 * on it (warm-pool members included). Read from the database at each scrape, so every replica
 * serves the same values.
 */
export function registerEngineMetrics(registry: Registry, db: Database): void {
  // One read serves both gauges of a scrape (prom-client collects them one after the other).
  let reading: ReturnType<typeof readEngines> | undefined;
  const read = () => {
    reading ??= readEngines(db).finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  new Gauge({
    name: 'sandbox_server_engine_up',
    help: 'Whether the engine answered its reconciler (1) or is unreachable or not yet seen (0)',
    labelNames: ['engine'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const engine of await read()) this.set({ engine: engine.name }, engine.health === 'HEALTHY' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'sandbox_server_engine_sandboxes',
    help: 'Live sandboxes placed on the engine, warm-pool members included',
    labelNames: ['engine'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const engine of await read()) this.set({ engine: engine.name }, engine.sandboxes);
    },
  });
}

async function readEngines(db: Database) {
  return toEngineInfos(db, await db.select().from(engines));
}
