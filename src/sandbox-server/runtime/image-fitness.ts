/**
 * Whether an image can hold the agent-server brought into it (agent-bundle.ts). The bundle brings
 * node and the libraries it loads, so the one thing the image must have is bash, which the agent's
 * terminal and /api/bash run: found on the image's PATH without running anything, by asking the
 * engine for the file in a container created from the image (created, never started).
 */
import type Docker from 'dockerode';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import { LABEL_AGENT_SERVER_VERSION, type ImageCheck } from './runtime.js';

/** Docker's default PATH, for an image that sets none. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The PATH an image's Env sets, or Docker's default. */
export function pathOf(env: readonly string[] | undefined): string[] {
  const path = env?.find((entry) => entry.startsWith('PATH='))?.slice('PATH='.length) ?? DEFAULT_PATH;
  return path.split(':').filter((dir) => dir.startsWith('/'));
}

/** What a sandbox of `image` is told when the image cannot hold the agent-server. */
export function noBashReason(image: string, path: readonly string[]): string {
  return (
    `image ${image} cannot run the agent: it has no bash on its PATH (${path.join(':')}), and the agent's terminal runs bash. ` +
    'Alpine- or busybox-like images need bash added (alpine: apk add bash); any image with glibc or musl and bash works'
  );
}

async function exists(container: Docker.Container, path: string): Promise<boolean> {
  try {
    const answer = (await container.infoArchive({ path })) as { resume?: () => void };
    answer.resume?.();
    return true;
  } catch (error) {
    if (statusCodeOf(error) === 404) return false;
    throw toRuntimeError(error, `stat ${path}`);
  }
}

/** Why the agent-server cannot run in `container` (created from `image`, whose Env is `env`); null when it can. */
export async function whyUnfit(container: Docker.Container, image: string, env: readonly string[] | undefined): Promise<string | null> {
  const path = pathOf(env);
  for (const dir of path) if (await exists(container, `${dir}/bash`)) return null;
  return noBashReason(image, path);
}

/**
 * Checks images on one engine; an image's answer is kept by its id (an id's content never changes).
 * `labels` go on the short-lived container that looks inside it, so that a sweep finds one a crash left.
 */
export function imageChecker(docker: Docker, labels: Record<string, string>): { check(image: string): Promise<ImageCheck> } {
  const known = new Map<string, string | null>();
  return {
    async check(image) {
      let info: Docker.ImageInspectInfo;
      try {
        info = await docker.getImage(image).inspect();
      } catch (error) {
        if (statusCodeOf(error) === 404) return { present: false };
        throw toRuntimeError(error, 'image inspect');
      }
      if (info.Os && info.Os !== 'linux') return { present: true, unfit: `image ${image} is for ${info.Os}, not linux` };
      if (info.Config?.Labels?.[LABEL_AGENT_SERVER_VERSION] !== undefined) return { present: true, unfit: null };
      const cached = known.get(info.Id);
      if (cached !== undefined) return { present: true, unfit: cached };
      let container: Docker.Container;
      try {
        container = await docker.createContainer({ Image: info.Id, Entrypoint: ['/nonexistent'], Cmd: [], Labels: labels, HostConfig: { NetworkMode: 'none' } });
      } catch (error) {
        throw toRuntimeError(error, 'create a container to look into the image');
      }
      try {
        const unfit = await whyUnfit(container, image, info.Config?.Env);
        known.set(info.Id, unfit);
        return { present: true, unfit };
      } finally {
        await container.remove({ force: true }).catch(() => undefined);
      }
    },
  };
}
