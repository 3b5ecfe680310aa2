import { isNotNull, sql } from 'drizzle-orm';
import { ConflictError, validationError } from '../../../errors/index.js';
import { sandboxSpecs, specBuildLogs } from '../../db/schema.js';
import type { CreateSandboxSpecRequest, SandboxSpecInfo } from '../../models/sandbox-spec.js';
import type { ServiceContext } from '../context.js';
import { readSharedSettingsRow } from '../../installation/shared-settings.js';
import { chooseDefaultRuntime } from '../../runtime/default-runtime.js';
import { toSandboxSpecInfo } from './sandbox-spec-info.js';
import { prepareSpecBuild } from './spec-build.js';
import { normalizeEgressLists } from '../../net/egress-policy.js';

/** A limit left out takes the server's default; only an explicit null means none. */
function limitOrDefault(requested: number | null | undefined, fallback: number): number | null {
  return requested === undefined ? fallback : requested;
}

/**
 * Adds a spec; each resource limit and the runtime it leaves out are the installation's shared defaults (GET /api/v1/settings); its id defaults to the image. An id in use is a 409. The id of a deleted spec may be
 * taken again: the deleted row (kept for the sandboxes that referenced it) is overwritten in the
 * same statement, so two parallel requests cannot both succeed.
 */
export async function createSandboxSpec(ctx: ServiceContext, input: CreateSandboxSpecRequest): Promise<SandboxSpecInfo> {
  const defaults = await readSharedSettingsRow(ctx.db);
  const { available, failed } = ctx.runtimes;
  const runtime = input.runtime ?? chooseDefaultRuntime(defaults.runtime, available, failed).runtime;
  const failure = failed?.get(runtime);
  if (failure !== undefined) throw validationError('body', ['runtime'], `runtime "${runtime}" failed its self-test on the Docker engine: ${failure}`);
  if (available && !available.includes(runtime)) {
    throw validationError('body', ['runtime'], `the Docker engine has no runtime "${runtime}" (it has: ${available.join(', ')})`);
  }
  const { firewallProblem } = ctx.runtimes;
  if (input.network !== 'internet' && firewallProblem) {
    throw validationError('body', ['network'], `network "${input.network}" needs host firewall rules the control plane could not install (${firewallProblem})`);
  }
  const build = input.build ? await prepareSpecBuild(ctx, input.build, input.engine_labels) : null;
  const image = build?.tag ?? input.image ?? '';
  // A spec's own command runs whatever it likes; otherwise the agent-server is brought into the image.
  // A built image is checked at its sandboxes' start.
  const unfit = input.command === null && !build ? await ctx.whyImageUnfit?.(image) : null;
  if (unfit) throw validationError('body', ['image'], unfit);
  const now = new Date();
  const values = {
    id: input.id ?? image,
    image,
    command: input.command,
    initialEnv: input.initial_env,
    secretEnv: input.secret_env,
    secretHosts: input.secret_hosts,
    workingDir: input.working_dir,
    exposedPorts: input.exposed_ports,
    cpus: limitOrDefault(input.cpus, defaults.cpus),
    memoryMb: limitOrDefault(input.memory_mb, defaults.memoryMb),
    pidsLimit: limitOrDefault(input.pids_limit, defaults.pidsLimit),
    diskMb: limitOrDefault(input.disk_mb, defaults.diskMb),
    runtime,
    network: input.network,
    egress: normalizeEgressLists(input.egress),
    idlePauseSeconds: input.idle_pause_seconds,
    ttlSeconds: input.ttl_seconds,
    resumeOnAccess: input.resume_on_access,
    warmPoolSize: input.warm_pool_size,
    engineLabels: input.engine_labels,
    movable: input.movable,
    isDefault: false,
    buildStatus: build?.status ?? null,
    buildDetail: null,
    buildCached: build?.cached ?? false,
    buildStartedAt: build ? now : null,
    buildFinishedAt: build?.status === 'READY' ? now : null,
  };
  const row = await ctx.db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(sandboxSpecs)
      .values(values)
      .onConflictDoUpdate({
        target: sandboxSpecs.id,
        set: { ...values, createdAt: sql`now()`, deletedAt: null },
        setWhere: isNotNull(sandboxSpecs.deletedAt),
      })
      .returning();
    if (!inserted) throw new ConflictError(`Sandbox spec ${values.id} already exists`);
    if (build) {
      const log = { specId: inserted.id, log: `${build.firstLine}\n`, updatedAt: now };
      await tx.insert(specBuildLogs).values(log).onConflictDoUpdate({ target: specBuildLogs.specId, set: log });
    }
    return inserted;
  });
  if (build?.status === 'BUILDING') {
    ctx.specImages?.start({ specId: row.id, startedAt: now, tag: build.tag, dockerfile: build.dockerfile, context: build.context, engineLabels: row.engineLabels });
  }
  if (row.warmPoolSize > 0) ctx.reconciler.refillWarmPools?.();
  return toSandboxSpecInfo(row);
}
