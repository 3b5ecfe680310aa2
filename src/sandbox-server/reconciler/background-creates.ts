import { type ContainerRequest, RuntimeError, type SandboxRuntime } from '../runtime/runtime.js';
import { type CreateView, CreatesInFlight } from './creates-in-flight.js';

/** A create that has not settled after this long is forgotten (the engine may have hung). */
const CREATE_MEMORY_MS = 60_000;

/**
 * Creates run in the background (they are the slow step), remembered in CreatesInFlight until a
 * listing shows them; `changed` is told of each one's end and of each progress it reports (an image
 * pull's), so that its sandbox gets a pass.
 */
export class BackgroundCreates {
  private readonly creates = new CreatesInFlight(CREATE_MEMORY_MS);
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly changed: (sandboxId: string) => void,
  ) {}

  start(request: ContainerRequest): void {
    const { sandboxId } = request;
    this.creates.begin(sandboxId, Date.now());
    // The image first (pulled when the engine lacks it, outside the create slots: a pull may be long),
    // its progress shown as the sandbox's status_detail.
    const onProgress = (line: string) => {
      this.creates.progress(sandboxId, line);
      this.changed(sandboxId);
    };
    const settled = this.runtime.ensureImage(request.image, onProgress).then(() => this.runtime.create(request)).then(
      (container) => this.creates.settle(sandboxId, Date.now(), { containerId: container.containerId }),
      (error: unknown) => {
        const runtimeError = error instanceof RuntimeError ? error : new RuntimeError(String(error), false);
        this.creates.settle(sandboxId, Date.now(), { error: runtimeError });
      },
    );
    const tracked = settled.finally(() => {
      this.pending.delete(tracked);
      this.changed(sandboxId);
    });
    this.pending.add(tracked);
  }

  /** What a pass whose listing was taken at `listedAt` should believe of the sandbox's creates (CreatesInFlight.view). */
  view(sandboxId: string, listedAt: number, now: number, listed: boolean): CreateView {
    return this.creates.view(sandboxId, listedAt, now, listed);
  }

  /** Settles once every create under way has. */
  async allSettled(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
