/**
 * Wakes the waits on a sandbox when this process's reconciler writes its observed state. Lifecycle
 * events (EventFeed) reach every replica but mark only status changes; a write that changes no
 * status, such as a starting sandbox's container coming up with its port published, is announced
 * here alone, in this process.
 */
export class ObservedWrites {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Settles at the sandbox's next write; once `stop` aborts it never does, and is forgotten. */
  next(sandboxId: string, stop: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (stop.aborted) return;
      let waiters = this.#waiters.get(sandboxId);
      if (!waiters) this.#waiters.set(sandboxId, (waiters = new Set()));
      const own = waiters;
      const drop = () => {
        own.delete(wake);
        if (own.size === 0 && this.#waiters.get(sandboxId) === own) this.#waiters.delete(sandboxId);
      };
      const wake = () => {
        stop.removeEventListener('abort', drop);
        resolve();
      };
      own.add(wake);
      stop.addEventListener('abort', drop, { once: true });
    });
  }

  written(sandboxId: string): void {
    const waiters = this.#waiters.get(sandboxId);
    this.#waiters.delete(sandboxId);
    for (const wake of waiters ?? []) wake();
  }
}
