import { isNotNull, sql } from 'drizzle-orm';
import { ConflictError, validationError } from '../../../errors/index.js';
import { sandboxSpecs } from '../../db/schema.js';
import type { CreateSandboxSpecRequest, SandboxSpecInfo } from '../../models/sandbox-spec.js';
import type { ServiceContext } from '../context.js';
import { readSharedSettingsRow } from '../../installation/shared-settings.js';
import { chooseDefaultRuntime } from '../../runtime/default-runtime.js';
import { toSandboxSpecInfo } from './sandbox-spec-info.js';

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
  if (input.network === 'none' && firewallProblem) {
    throw validationError('body', ['network'], `network "none" needs host firewall rules the control plane could not install (${firewallProblem})`);
  }
  // A spec's own command runs whatever it likes; otherwise the agent-server is brought into the image.
  const unfit = input.command === null ? await ctx.whyImageUnfit?.(input.image) : null;
  if (unfit) throw validationError('body', ['image'], unfit);
  const values = {
    id: input.id ?? input.image,
    image: input.image,
    command: input.command,
    initialEnv: input.initial_env,
    secretEnv: input.secret_env,
    workingDir: input.working_dir,
    exposedPorts: input.exposed_ports,
    cpus: limitOrDefault(input.cpus, defaults.cpus),
    memoryMb: limitOrDefault(input.memory_mb, defaults.memoryMb),
    pidsLimit: limitOrDefault(input.pids_limit, defaults.pidsLimit),
    diskMb: limitOrDefault(input.disk_mb, defaults.diskMb),
    runtime,
    network: input.network,
    idlePauseSeconds: input.idle_pause_seconds,
    ttlSeconds: input.ttl_seconds,
    resumeOnAccess: input.resume_on_access,
    warmPoolSize: input.warm_pool_size,
    engineLabels: input.engine_labels,
    movable: input.movable,
    isDefault: false,
  };
  const [row] = await ctx.db
    .insert(sandboxSpecs)
    .values(values)
    .onConflictDoUpdate({
      target: sandboxSpecs.id,
      set: { ...values, createdAt: sql`now()`, deletedAt: null },
      setWhere: isNotNull(sandboxSpecs.deletedAt),
    })
    .returning();
  if (!row) throw new ConflictError(`Sandbox spec ${values.id} already exists`);
  if (row.warmPoolSize > 0) ctx.reconciler.refillWarmPools?.();
  return toSandboxSpecInfo(row);
}
