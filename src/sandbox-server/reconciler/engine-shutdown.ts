import type { SandboxRuntime } from '../runtime/runtime.js';
import { forEachLimited } from './limit.js';
import { type ContainersBySandbox, PASS_CONCURRENCY, type RowWithSpec } from './observe.js';

/**
 * An engine shutting down stops its containers before its API goes away (Docker gives each up to
 * 10 s, then kills it): containers that finished this long before the engine was found gone, or
 * later, were stopped by the engine rather than by a crash of their own.
 */
const ENGINE_SHUTDOWN_WINDOW_MS = 30_000;

/** Sandboxes wanted running whose container finished around the time the engine went away (`lostAt`). */
export async function stoppedByEngine(
  runtime: SandboxRuntime,
  entries: RowWithSpec[],
  bySandbox: ContainersBySandbox,
  lostAt: number,
): Promise<Set<string>> {
  const stopped = new Set<string>();
  const candidates = entries.filter(({ row }) => {
    const containers = bySandbox.get(row.id) ?? [];
    return row.desiredState === 'RUNNING' && containers.length === 1 && containers[0]?.state === 'exited';
  });
  await forEachLimited(candidates, PASS_CONCURRENCY, async ({ row }) => {
    const listed = bySandbox.get(row.id)?.[0];
    const container = listed && (await runtime.inspect(listed.containerId));
    if (container?.finishedAt != null && container.finishedAt >= lostAt - ENGINE_SHUTDOWN_WINDOW_MS) stopped.add(row.id);
  });
  return stopped;
}
