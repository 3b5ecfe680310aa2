import type { EngineInfo } from '../../models/engine.js';
import type { ServiceContext } from '../context.js';
import { setEngineState } from './set-engine-state.js';

/** The engine takes new sandboxes again, whether it was cordoned or draining. */
export function uncordonEngine(ctx: ServiceContext, name: string): Promise<EngineInfo> {
  return setEngineState(ctx, name, { to: 'ACTIVE', from: ['CORDONED', 'DRAINING'], event: 'engine.uncordoned' });
}
