/**
 * Images a sandbox needs and its engine lacks are pulled, with the credentials REGISTRY_AUTH gives
 * for the image's registry host, one pull per image at a time however many sandboxes wait for it.
 * Its progress is told as one line (bytes and layers so far), which the sandbox shows in its
 * status_detail while it starts.
 */
import type Docker from 'dockerode';
import { dockerMessageOf, statusCodeOf } from './docker-errors.js';
import type { Logger } from '../../logger.js';
import { RuntimeError } from './runtime.js';

/** A registry's user and password (or token), per registry host (`host[:port]`, `docker.io` for Docker Hub). */
export type RegistryAuth = Record<string, { username: string; password: string }>;

/** Images of this repository namespace are the control plane's own (built or committed on the engine), never pulled. */
const OWN_NAMESPACE = 'sandbox-server/';

/**
 * The registry host of an image reference, as Docker reads it: the part before the first "/" when
 * it has a "." or ":" or is "localhost"; Docker Hub (docker.io) otherwise.
 */
export function registryHostOf(image: string): string {
  const slash = image.indexOf('/');
  if (slash < 0) return 'docker.io';
  const first = image.slice(0, slash);
  if (first.includes('.') || first.includes(':') || first === 'localhost') return first === 'index.docker.io' ? 'docker.io' : first;
  return 'docker.io';
}

/** One event of a pull's progress stream. */
interface PullEvent {
  id?: string;
  status?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
  errorDetail?: { message?: string };
}

const MB = 1024 * 1024;

/** Sums a pull's layers as they report: bytes downloaded of the layers' sizes known so far. */
export class PullProgress {
  private readonly layers = new Map<string, { current: number; total: number; done: boolean }>();

  constructor(private readonly image: string) {}

  note(event: PullEvent): void {
    if (!event.id || event.id === this.image.split(':').pop()) return;
    const layer = this.layers.get(event.id) ?? { current: 0, total: 0, done: false };
    const status = event.status ?? '';
    if (status === 'Downloading' && event.progressDetail?.total) {
      layer.current = event.progressDetail.current ?? layer.current;
      layer.total = event.progressDetail.total;
    }
    if (/^(Download complete|Pull complete|Already exists)$/.test(status)) {
      layer.done = true;
      layer.current = layer.total;
    }
    this.layers.set(event.id, layer);
  }

  line(): string {
    const layers = [...this.layers.values()];
    const done = layers.filter((layer) => layer.done).length;
    const current = layers.reduce((sum, layer) => sum + layer.current, 0);
    const total = layers.reduce((sum, layer) => sum + layer.total, 0);
    const bytes = total > 0 ? `${(current / MB).toFixed(1)} of ${(total / MB).toFixed(1)} MB, ` : '';
    return `pulling image ${this.image}: ${bytes}${done} of ${layers.length} layers`;
  }
}

/** A pull that failed: the registry's answer (no such image, bad credentials) is final; anything else is retried. */
function pullError(image: string, message: string, status?: number): RuntimeError {
  const final = status === 404 || status === 401 || status === 403 || /unauthorized|denied|not found|manifest unknown|no basic auth|does not exist/i.test(message);
  return new RuntimeError(`pulling image ${image} failed: ${message}`, final);
}

export interface ImagePuller {
  /**
   * Makes `image` present on the engine: nothing when it is (or is the control plane's own),
   * otherwise a pull, joined by every caller while it runs. `onProgress` gets a line now and then.
   */
  ensure(image: string, onProgress?: (line: string) => void): Promise<void>;
}

/** How often a pull's progress is told at most. */
const PROGRESS_EVERY_MS = 1_000;

/** `log` gets one line as each pull starts and as it ends (never the credentials). */
export function imagePuller(docker: Docker, auth: RegistryAuth, log: Logger): ImagePuller {
  const pulls = new Map<string, { done: Promise<void>; listeners: Set<(line: string) => void> }>();

  async function present(image: string): Promise<boolean> {
    try {
      await docker.getImage(image).inspect();
      return true;
    } catch (error) {
      if (statusCodeOf(error) === 404) return false;
      throw new RuntimeError(`docker image inspect failed: ${dockerMessageOf(error)}`, false);
    }
  }

  async function pull(image: string, tell: (line: string) => void): Promise<void> {
    const host = registryHostOf(image);
    const credentials = auth[host] ?? (host === 'docker.io' ? (auth['index.docker.io'] ?? auth['registry-1.docker.io']) : undefined);
    const progress = new PullProgress(image);
    tell(`pulling image ${image}`);
    let stream: NodeJS.ReadableStream;
    try {
      stream = await docker.pull(image, credentials ? { authconfig: { ...credentials, serveraddress: host } } : {});
    } catch (error) {
      throw pullError(image, dockerMessageOf(error), statusCodeOf(error));
    }
    let toldAt = 0;
    const events = await new Promise<PullEvent[]>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (error, output: PullEvent[]) => (error ? reject(pullError(image, dockerMessageOf(error))) : resolve(output)),
        (event: PullEvent) => {
          progress.note(event);
          if (Date.now() - toldAt < PROGRESS_EVERY_MS) return;
          toldAt = Date.now();
          tell(progress.line());
        },
      );
    });
    // The engine reports a failed pull inside the stream, not as an HTTP error.
    const failure = events.find((event) => event.error);
    if (failure) throw pullError(image, failure.errorDetail?.message ?? failure.error ?? 'unknown error');
    tell(`pulled image ${image}`);
  }

  return {
    async ensure(image, onProgress) {
      if (image.startsWith(OWN_NAMESPACE) || (await present(image))) return;
      let running = pulls.get(image);
      if (!running) {
        const listeners = new Set<(line: string) => void>();
        const startedAt = Date.now();
        log.info({ image, registry: registryHostOf(image) }, 'pulling image');
        const done = pull(image, (line) => {
          for (const listener of listeners) listener(line);
        })
          .then(
            () => log.info({ image, durationMs: Date.now() - startedAt }, 'pulled image'),
            (error: unknown) => {
              log.warn({ image, err: error }, 'pulling image failed');
              throw error;
            },
          )
          .finally(() => pulls.delete(image));
        running = { done, listeners };
        pulls.set(image, running);
      }
      if (onProgress) running.listeners.add(onProgress);
      try {
        await running.done;
      } finally {
        if (onProgress) running.listeners.delete(onProgress);
      }
    },
  };
}
