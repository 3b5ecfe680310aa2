import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { tarOf } from '../runtime/tar.js';

/** Where the spec's Dockerfile goes in the context sent to the engine; listed in .dockerignore, so no COPY takes it. */
export const SPEC_DOCKERFILE_NAME = '.sandbox-server.Dockerfile';

export interface SpecImageBuild {
  tag: string;
  dockerfile: string;
  /** The context's entries as a tar without its end marker, and its own .dockerignore; null: empty. */
  context: { archive: Buffer; dockerignore: string | null } | null;
  /** Labels the image carries. */
  labels: Record<string, string>;
  /** Aborts the build (the engine stops it when the request goes). */
  signal: AbortSignal;
}

/** Why a build failed, as the engine said (a step's exit, a missing file, a bad instruction). */
export class SpecImageBuildError extends Error {}

interface BuildEvent {
  stream?: string;
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/**
 * The context as the engine takes it: the caller's entries, the Dockerfile beside them, and a
 * .dockerignore naming it (and itself) after whatever the context's own said. The engine reads the
 * Dockerfile, then leaves both files out of what COPY and ADD see; it applies no other
 * .dockerignore rule (a client does that when packing, as sandboxctl does).
 */
export function specBuildContext(build: Pick<SpecImageBuild, 'dockerfile' | 'context'>): Buffer {
  const ignore = `${build.context?.dockerignore ?? ''}\n${SPEC_DOCKERFILE_NAME}\n.dockerignore\n`;
  const extra = tarOf([
    { path: SPEC_DOCKERFILE_NAME, mode: 0o644, content: Buffer.from(build.dockerfile, 'utf8') },
    { path: '.dockerignore', mode: 0o644, content: Buffer.from(ignore, 'utf8') },
  ]);
  return build.context ? Buffer.concat([build.context.archive, extra]) : extra;
}

/**
 * Builds `build.tag` on one engine with the classic builder, with no network; the
 * engine's output goes to `onOutput` as it comes. A failed step throws SpecImageBuildError with
 * the engine's reason.
 */
export async function buildSpecImage(docker: Docker, build: SpecImageBuild, onOutput: (text: string) => void): Promise<void> {
  const stream = await docker.buildImage(Readable.from([specBuildContext(build)]), {
    t: build.tag,
    dockerfile: SPEC_DOCKERFILE_NAME,
    labels: build.labels,
    networkmode: 'none',
    rm: true,
    forcerm: true,
    abortSignal: build.signal,
  });
  /** The instruction running, which a failure's reason names. */
  let lastStep: string | undefined;
  const output = await new Promise<BuildEvent[]>((resolve, reject) => {
    const onAbort = () => (stream as Readable).destroy(new Error(String(build.signal.reason)));
    build.signal.addEventListener('abort', onAbort, { once: true });
    docker.modem.followProgress(
      stream,
      (error, events: BuildEvent[]) => {
        build.signal.removeEventListener('abort', onAbort);
        if (build.signal.aborted) reject(new SpecImageBuildError(String(build.signal.reason)));
        else if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve(events);
      },
      (event: BuildEvent) => {
        const step = /^Step \d+\/\d+ : (.*)$/m.exec(event.stream ?? '');
        if (step) lastStep = step[1]!.trim();
        if (event.stream) onOutput(event.stream);
        else if (event.status) onOutput(`${event.status}\n`);
        else if (event.error) onOutput(`${event.errorDetail?.message ?? event.error}\n`);
      },
    );
  });
  // The engine reports a failed build inside the stream, not as an HTTP error.
  const failure = output.find((event) => event.error);
  if (failure) {
    const message = failure.errorDetail?.message ?? failure.error ?? 'the build failed';
    // FROM an image the engine lacks: it tried to pull it, and said only why the pull failed.
    const missingBase = lastStep?.startsWith('FROM ') && !/^The command/.test(message);
    const reason = missingBase ? `the engine has no image ${lastStep?.slice(5)} and could not pull it: ${message}` : message;
    throw new SpecImageBuildError(lastStep ? `${lastStep.slice(0, 200)}: ${reason}` : reason);
  }
}
