import { OCI_RUNTIMES } from '../../contracts/sandbox.js';
import type { Logger } from '../../logger.js';
import type { RuntimeProbe, SandboxRuntime } from '../runtime/runtime.js';

export interface RuntimeProbesOptions {
  /**
   * Images to test with, the first the engine has: the agent-server image (what sandboxes run),
   * then its base (present before the first build).
   */
  images: readonly string[];
  log: Logger;
}

/**
 * The self-test of every OCI runtime sandboxes may use (OCI_RUNTIMES the engine lists), run once per
 * engine when this replica adds it (at start, and when one is registered), and its results, which
 * `/api/v1/engines` shows and the choice of the default runtime reads. Each replica tests the
 * engines it drives itself.
 */
export class RuntimeProbes {
  readonly #options: RuntimeProbesOptions;
  readonly #probes = new Map<string, Promise<RuntimeProbe[]>>();
  readonly #results = new Map<string, RuntimeProbe[]>();

  constructor(options: RuntimeProbesOptions) {
    this.#options = options;
  }

  /** Tests the engine's runtimes (once: a second call answers the first's results). */
  probe(engine: string, runtime: SandboxRuntime): Promise<RuntimeProbe[]> {
    const running = this.#probes.get(engine);
    if (running) return running;
    const probes: Promise<RuntimeProbe[]> = this.#run(engine, runtime).then((results) => {
      if (this.#probes.get(engine) === probes) this.#results.set(engine, results);
      return results;
    });
    this.#probes.set(engine, probes);
    return probes;
  }

  /** The engine's finished results; null while its test runs or before it began. */
  resultsOf(engine: string): RuntimeProbe[] | null {
    return this.#results.get(engine) ?? null;
  }

  /** Forgets a removed engine, so that one registered again under its name is tested again. */
  forget(engine: string): void {
    this.#probes.delete(engine);
    this.#results.delete(engine);
  }

  async #run(engine: string, runtime: SandboxRuntime): Promise<RuntimeProbe[]> {
    const { log } = this.#options;
    const listed = await runtime.runtimes().catch(() => null);
    // An engine that cannot be asked now is not tested; its reconciler reports it unreachable.
    if (listed === null) return [];
    const image = await this.#imageOn(runtime);
    const results = await Promise.all(
      OCI_RUNTIMES.filter((name) => listed.includes(name)).map(
        (name): Promise<RuntimeProbe> =>
          image === null
            ? Promise.resolve({ runtime: name, status: 'unknown', detail: `none of ${this.#options.images.join(', ')} is on the engine to test it with`, image: null, durationMs: 0, probedAt: new Date() })
            : runtime.probeRuntime(name, image),
      ),
    );
    for (const result of results) {
      const fields = { engine, runtime: result.runtime, image: result.image, durationMs: result.durationMs };
      if (result.status === 'ok') log.info(fields, 'runtime passed its self-test');
      else log.warn({ ...fields, detail: result.detail }, `runtime ${result.runtime} ${result.status === 'failed' ? 'failed' : 'could not run'} its self-test on engine ${engine}: ${result.detail}`);
    }
    return results;
  }

  async #imageOn(runtime: SandboxRuntime): Promise<string | null> {
    for (const image of this.#options.images) {
      if ((await runtime.imageId(image).catch(() => null)) !== null) return image;
    }
    return null;
  }
}

/** The runtimes that failed their self-test, each with why. */
export function failedProbes(results: readonly RuntimeProbe[]): Map<string, string> {
  return new Map(results.filter((result) => result.status === 'failed').map((result) => [result.runtime, result.detail ?? 'failed']));
}
