import { and, eq, isNull, sql } from 'drizzle-orm';
import { validationError } from '../../../errors/index.js';
import { installationSettings, sandboxSpecs } from '../../db/schema.js';
import type { SettingsInfo, UpdateSettingsRequest } from '../../models/settings.js';
import type { ServiceContext } from '../context.js';
import { chooseDefaultRuntime } from '../../runtime/default-runtime.js';
import { toSettingsInfo } from './settings-info.js';

/**
 * Changes the installation's shared settings for every replica, and the default spec with them (its
 * warm pool, limits and runtime); specs created earlier keep their own. A runtime that failed its
 * self-test, or that the engine lacks, is refused with 422, as a spec naming it would be.
 */
export async function updateSettings(ctx: ServiceContext, input: UpdateSettingsRequest): Promise<SettingsInfo> {
  const changes = {
    warmPoolSize: input.warm_pool_size,
    memoryMb: input.default_memory_mb,
    pidsLimit: input.default_pids_limit,
    cpus: input.default_cpus,
    diskMb: input.default_disk_mb,
    runtime: input.default_runtime,
  };
  const runtime = input.default_runtime === undefined ? undefined : chooseDefaultRuntime(input.default_runtime, ctx.runtimes.available, ctx.runtimes.failed);
  if (runtime?.refusal) throw validationError('body', ['default_runtime'], runtime.refusal);
  const row = await ctx.db.transaction(async (tx) => {
    const [updated] = await tx.update(installationSettings).set({ ...changes, updatedAt: sql`now()` }).returning();
    if (!updated) throw new Error('the database holds no shared settings: no control plane has started on it');
    const { warmPoolSize, memoryMb, pidsLimit, cpus, diskMb } = updated;
    await tx
      .update(sandboxSpecs)
      .set({ warmPoolSize, memoryMb, pidsLimit, cpus, diskMb, ...(runtime && { runtime: runtime.runtime }) })
      .where(and(eq(sandboxSpecs.isDefault, true), isNull(sandboxSpecs.deletedAt)));
    return updated;
  });
  if (input.warm_pool_size !== undefined) ctx.reconciler.refillWarmPools?.();
  return toSettingsInfo(row);
}
