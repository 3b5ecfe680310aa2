import type { EngineInfo } from '../../models/engine.js';
import type { ServiceContext } from '../context.js';
import { setEngineState } from './set-engine-state.js';

/**
 * No new sandboxes are placed on the engine, and the replica holding its lease moves its paused
 * sandboxes to other engines by snapshot (engines/drainer.ts), running ones once they are idle;
 * those whose spec is not movable stay until deleted. Its warm-pool members are retired and replaced
 * elsewhere (see setEngineState). Uncordoning stops the drain.
 */
export function drainEngine(ctx: ServiceContext, name: string): Promise<EngineInfo> {
  return setEngineState(ctx, name, { to: 'DRAINING', from: ['ACTIVE', 'CORDONED'], event: 'engine.draining' });
}
