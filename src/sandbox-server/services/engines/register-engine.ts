import { eq } from 'drizzle-orm';
import { ConflictError } from '../../../errors/index.js';
import { engineOfIdentity, sameEngineMessage } from './engine-identity.js';
import { engines } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { EngineInfo, RegisterEngineRequest } from '../../models/engine.js';
import type { ServiceContext } from '../context.js';
import { announceEngines } from './announce-engines.js';
import { toEngineInfo } from './engine-view.js';

/**
 * Registers an engine, ACTIVE and of unknown health until its reconciler first looks. Every replica
 * picks it up without a restart (announceEngines), and the one winning its lease starts its
 * reconciler once the agent-server image is on it. A name already registered: 409. A dockerd
 * already registered under another name (the same identity, when it answers: see
 * engines/docker-identity.ts): 409 naming that engine; the unique identity column keeps two racing
 * registrations from both getting in.
 */
export async function registerEngine(ctx: ServiceContext, input: RegisterEngineRequest): Promise<EngineInfo> {
  const identity = (await ctx.engineIdentity?.(input.docker_url)) ?? null;
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(engines)
      .values({ name: input.name, dockerUrl: input.docker_url, advertiseHost: input.advertise_host, maxSandboxes: input.max_sandboxes, labels: input.labels, dockerIdentity: identity })
      .onConflictDoNothing()
      .returning();
    if (!row) {
      const twin = identity === null ? null : await engineOfIdentity(tx, identity, input.name);
      const [named] = await tx.select({ name: engines.name }).from(engines).where(eq(engines.name, input.name));
      if (twin !== null && !named) throw new ConflictError(sameEngineMessage(input.name, twin, identity as string));
      throw new ConflictError(`Engine ${input.name} is already registered`);
    }
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
    return toEngineInfo(row, { live: 0, remaining: 0, staying: 0 }, ctx.runtimeProbes);
  });
}
