import type { ContainerObservation, RuntimeEvent, SandboxRuntime } from '../runtime/runtime.js';
import { forEachLimited } from './limit.js';
import { type ContainersBySandbox, PASS_CONCURRENCY, type RowWithSpec } from './observe.js';

/** Container events after which the engine's listing may still show the state before them. */
const LISTING_LAGS = new Set(['die', 'oom', 'stop', 'kill', 'pause', 'unpause', 'destroy']);

/**
 * The engine's listing can lag its events (a container listed as running after its `die`), so the
 * containers such an event names are inspected by the pass it triggers instead of read from the
 * listing. Only events of a container that stopped or froze: an inspect waits for a container
 * being started, which under gVisor takes a second or two, and a burst's passes each waited that
 * long for the `create` and `start` events of the containers still starting.
 */
export class EventedContainers {
  /** Containers named by runtime events since a pass last looked at their sandbox, by sandbox. */
  private readonly named = new Map<string, Set<string>>();

  constructor(private readonly runtime: SandboxRuntime) {}

  note(event: RuntimeEvent): void {
    if (!event.sandboxId || !event.containerId || !LISTING_LAGS.has(event.action)) return;
    const containers = this.named.get(event.sandboxId) ?? new Set<string>();
    containers.add(event.containerId);
    this.named.set(event.sandboxId, containers);
  }

  /** Replaces the listing of each sandbox an event named by a fresh inspect of its containers. */
  async inspect(entries: RowWithSpec[], bySandbox: ContainersBySandbox): Promise<void> {
    const stale = entries.map((e) => e.row.id).filter((id) => this.named.has(id));
    await forEachLimited(stale, PASS_CONCURRENCY, async (sandboxId) => {
      const named = this.named.get(sandboxId) ?? new Set<string>();
      this.named.delete(sandboxId);
      const ids = new Set([...named, ...(bySandbox.get(sandboxId) ?? []).map((c) => c.containerId)]);
      const inspected = await Promise.all([...ids].map((id) => this.runtime.inspect(id)));
      bySandbox.set(
        sandboxId,
        inspected.filter((c): c is ContainerObservation => c !== undefined && c.sandboxId === sandboxId),
      );
    });
  }
}
