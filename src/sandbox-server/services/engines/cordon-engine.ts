import type { EngineInfo } from '../../models/engine.js';
import type { ServiceContext } from '../context.js';
import { setEngineState } from './set-engine-state.js';

/** No new sandboxes are placed on the engine; those on it stay. A draining engine stays draining (409). */
export function cordonEngine(ctx: ServiceContext, name: string): Promise<EngineInfo> {
  return setEngineState(ctx, name, { to: 'CORDONED', from: ['ACTIVE'], event: 'engine.cordoned' });
}
