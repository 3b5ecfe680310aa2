/**
 * Follows `sandbox.running` lifecycle events on a control plane's SSE stream, as `sandboxctl
 * sandboxes wait` sees them, so that a bench waiting for sandboxes adds no polling load.
 */
export interface RunningEvents {
  /** Settles once the sandbox's `sandbox.running` has arrived (at once if it already has). */
  seen(sandboxId: string): Promise<void>;
  /** When each sandbox's first `sandbox.running` arrived, `performance.now()` ms. */
  arrivedAt: ReadonlyMap<string, number>;
  stop(): void;
}

export async function followRunningEvents(url: string, headers: Record<string, string> = {}): Promise<RunningEvents> {
  const arrivedAt = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const stopped = new AbortController();
  const response = await fetch(`${url}/api/v1/events/stream?type=sandbox.running`, { headers, signal: stopped.signal });
  if (!response.ok || !response.body) throw new Error(`event stream: ${response.status} ${await response.text()}`);
  const body = response.body;
  void (async () => {
    let buffered = '';
    for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.startsWith('data:'))) {
        const id = (JSON.parse(line.slice('data:'.length)) as { sandbox_id: string }).sandbox_id;
        if (!arrivedAt.has(id)) arrivedAt.set(id, performance.now());
        waiters.get(id)?.();
      }
    }
  })().catch(() => undefined);
  return {
    seen: (sandboxId) =>
      arrivedAt.has(sandboxId) ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(sandboxId, resolve)),
    arrivedAt,
    stop: () => stopped.abort(),
  };
}
