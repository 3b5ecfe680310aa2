import { RuntimeError, type SandboxRuntime } from '../runtime/runtime.js';
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

/** Whether a container wanted running, and not yet found failed, has exited. */
export function exitedWhileWanted(entries: RowWithSpec[], bySandbox: ContainersBySandbox): boolean {
  return entries.some(({ row }) => row.desiredState === 'RUNNING' && row.status !== 'ERROR' && (bySandbox.get(row.id) ?? []).some((c) => c.state === 'exited'));
}

/**
 * A dockerd shutting down closes its listener, then stops every container, still serving the
 * connections it has: their exits reach a pass as if they were crashes, and a pass over such a
 * connection would take it for back. Only a new connection tells, so the pass fails (the engine
 * counts as gone) until one is taken; the pass after it starts again the containers it stopped.
 */
export async function requireNewConnections(runtime: SandboxRuntime): Promise<void> {
  if (!(await runtime.takesNewConnections())) throw new RuntimeError('the engine is shutting down: it takes no new connection', false);
}
