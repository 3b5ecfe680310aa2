import type { AgentServerTarget } from '../agent-client.js';

/**
 * The agent-server targets of sandboxes the proxy has reached, kept in memory so that a proxied
 * request costs no database read. An entry is only ever taken from a sandbox that is RUNNING and
 * wanted RUNNING (or STARTING, wanted RUNNING, and found answering by waitForAgentServer), and is
 * dropped whenever that may have changed: a service's write of desired state
 * (each is followed by a reconciler kick, which the app routes through `forget`), the reconciler's
 * write of observed state, and an upstream that cannot be reached.
 *
 * A read that began before a change must not bring the old target back: `remember` takes the
 * generation seen before the read and stores nothing when a `forget` came in between.
 */
export class TargetCache {
  private readonly targets = new Map<string, AgentServerTarget>();
  private generation = 0;

  get(sandboxId: string): AgentServerTarget | undefined {
    return this.targets.get(sandboxId);
  }

  /** The generation to hand to `remember` after reading a sandbox. */
  mark(): number {
    return this.generation;
  }

  remember(sandboxId: string, target: AgentServerTarget, seen: number): void {
    if (seen === this.generation) this.targets.set(sandboxId, target);
  }

  /** Drops one sandbox's target, or every target when no id is given. */
  forget(sandboxId?: string): void {
    this.generation++;
    if (sandboxId === undefined) this.targets.clear();
    else this.targets.delete(sandboxId);
  }
}
