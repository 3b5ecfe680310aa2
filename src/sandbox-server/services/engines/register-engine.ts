import { ConflictError } from '../../../errors/index.js';
import { engines } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { EngineInfo, RegisterEngineRequest } from '../../models/engine.js';
import type { ServiceContext } from '../context.js';
import { announceEngines } from './announce-engines.js';
import { toEngineInfo } from './engine-view.js';

/**
 * Registers an engine, ACTIVE and of unknown health until its reconciler first looks. Every replica
 * picks it up without a restart (announceEngines), and the one winning its lease starts its
 * reconciler once the agent-server image is on it. A name already registered: 409.
 */
export async function registerEngine(ctx: ServiceContext, input: RegisterEngineRequest): Promise<EngineInfo> {
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(engines)
      .values({ name: input.name, dockerUrl: input.docker_url, advertiseHost: input.advertise_host, maxSandboxes: input.max_sandboxes, labels: input.labels })
      .onConflictDoNothing()
      .returning();
    if (!row) throw new ConflictError(`Engine ${input.name} is already registered`);
    await announceEngines(tx);
    await recordEvent(tx, {
      type: 'engine.registered',
      subjectKind: 'engine',
      subjectId: row.name,
      sandboxId: null,
      previousStatus: null,
      status: row.state,
      statusDetail: `${row.dockerUrl}, published on ${row.advertiseHost}`,
    });
    return toEngineInfo(row, { live: 0, remaining: 0, staying: 0 });
  });
}
