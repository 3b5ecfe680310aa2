/**
 * The containers a pass froze while their agent-server answered (the sandbox was RUNNING): thawed
 * again, the same processes go on where they stopped, so the pass that unpauses one sees it
 * RUNNING at once instead of asking /alive over the network first. Kept in memory only: after a
 * restart, or for a container frozen by anyone else, the pass asks as before.
 */
export class FrozenAlive {
  /** Sandbox id -> the container frozen while alive. */
  readonly #frozen = new Map<string, string>();

  note(sandboxId: string, containerId: string): void {
    this.#frozen.set(sandboxId, containerId);
  }

  /** Whether this container of the sandbox was frozen while alive; forgotten either way. */
  take(sandboxId: string, containerId: string): boolean {
    const frozen = this.#frozen.get(sandboxId);
    this.#frozen.delete(sandboxId);
    return frozen === containerId;
  }

  forget(sandboxId: string): void {
    this.#frozen.delete(sandboxId);
  }
}
