import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes, sandboxSpecs } from '../db/schema.js';
import type { ContainerObservation, SandboxRuntime } from '../runtime/runtime.js';

/** Sandboxes handled at once within a pass (alive checks are cheap; runtime calls are limited in limited-runtime.ts). */
export const PASS_CONCURRENCY = 8;

export interface RowWithSpec {
  row: SandboxRow;
  spec: SandboxSpecRow | undefined;
}

/** The pass's containers, by the sandbox they are labelled with. */
export type ContainersBySandbox = Map<string, ContainerObservation[]>;

/**
 * The containers of every sandbox, or of the sandboxes `only` names. A pass over a few sandboxes
 * lists only their containers, each sandbox's filtered by the engine: a kick need not have the
 * engine describe every container it runs.
 */
export async function listContainers(runtime: SandboxRuntime, only: Set<string> | undefined): Promise<ContainerObservation[]> {
  if (only === undefined || only.size > PASS_CONCURRENCY) return runtime.list();
  return (await Promise.all([...only].map((sandboxId) => runtime.list(sandboxId)))).flat();
}

/** The live rows of the engine's sandboxes (or of those `only` names), each with its spec. */
export async function loadRows(db: Database, engine: string, only: Set<string> | undefined): Promise<RowWithSpec[]> {
  if (only?.size === 0) return [];
  const live = and(eq(sandboxes.engine, engine), isNull(sandboxes.deletedAt));
  const rows = await db
    .select({ row: sandboxes, spec: sandboxSpecs })
    .from(sandboxes)
    .leftJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
    .where(only ? and(live, inArray(sandboxes.id, [...only])) : live);
  return rows.map(({ row, spec }) => ({ row, spec: spec ?? undefined }));
}

export function bySandbox(observed: readonly ContainerObservation[]): ContainersBySandbox {
  const grouped: ContainersBySandbox = new Map();
  for (const container of observed) {
    const list = grouped.get(container.sandboxId) ?? [];
    list.push(container);
    grouped.set(container.sandboxId, list);
  }
  return grouped;
}
