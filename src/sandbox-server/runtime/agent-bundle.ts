/**
 * The agent-server brought into an image that was not built for it. Once per engine and
 * agent-server image, a volume is filled from that image with the bundle (/app), node and every
 * shared library node loads, glibc's loader among them; a sandbox of any other image mounts it
 * read-only at AGENT_BUNDLE_MOUNT and runs node through that loader. So node needs nothing of the
 * image (not even its glibc, nor a glibc recent enough), nothing leaks into the environment of the
 * agent's processes (no LD_LIBRARY_PATH, no PATH entry), and the image keeps its own environment
 * and tools. What the image must have is bash, which the agent's terminal runs (image-fitness.ts).
 */
import type Docker from 'dockerode';
import { AGENT_SERVER_CONTAINER_PORT } from '../../contracts/sandbox.js';
import { dockerMessageOf, statusCodeOf, toRuntimeError } from './docker-errors.js';
import { LABEL_AGENT_SERVER_VERSION, RuntimeError } from './runtime.js';

/** Where a sandbox sees the bundle volume (read-only). */
export const AGENT_BUNDLE_MOUNT = '/opt/sandbox-server';
/** The filled bundle inside the volume; made whole by one rename, so a half-filled volume never shows it. */
const BUNDLE_DIR = `${AGENT_BUNDLE_MOUNT}/agent-server`;
/** The user the agent's commands run as; created at start when the image lacks it. */
export const BROUGHT_AGENT_USER = 'openhands';
/**
 * Carried by a bundle volume (the agent-server version it holds) and by each container it was
 * brought into. Not LABEL_AGENT_SERVER_VERSION: a snapshot commits the container's labels into its
 * image, and that image must still be seen as one the agent-server is brought into.
 */
export const LABEL_AGENT_BUNDLE = 'sandbox-server.agent-bundle';

/** How long filling a volume (copying ~100 MB) may take before it counts as failed. */
const FILL_TIMEOUT_MS = 120_000;

/**
 * Run in the agent-server image with the volume at /mnt: copies node, the libraries `ldd` names
 * (the loader also as lib/ld.so, a name that does not depend on the architecture) and /app into a
 * directory of its own, then renames it into place. A fill that lost the race to another removes its copy.
 */
const FILL_SCRIPT = `set -eu
dest=/mnt/agent-server
[ -d "$dest" ] && exit 0
tmp="/mnt/.fill-$HOSTNAME"
rm -rf "$tmp"; mkdir -p "$tmp/bin" "$tmp/lib"
node=$(command -v node)
cp "$node" "$tmp/bin/node"
for lib in $(ldd "$node" | awk '$2 == "=>" && $3 ~ /^\\// {print $3} $1 ~ /^\\// {print $1}'); do cp -L "$lib" "$tmp/lib/"; done
loader=$(ldd "$node" | awk '$1 ~ /^\\// {print $1}' | head -n 1)
[ -n "$loader" ] || { echo "ldd names no loader for $node" >&2; exit 1; }
cp -L "$loader" "$tmp/lib/ld.so"
cp -a /app "$tmp/app"
mv -T "$tmp" "$dest" 2>/dev/null || rm -rf "$tmp"
[ -x "$dest/bin/node" ]
`;

export interface AgentBundle {
  volume: string;
  /** The agent-server version it holds (the image's LABEL_AGENT_SERVER_VERSION). */
  version: string;
}

export interface AgentBundles {
  /** The bundle of the agent-server image as the engine has it now, its volume filled. */
  current(): Promise<AgentBundle>;
}

/** The bundle volume of an agent-server image: named by the image id, so a rebuilt image gets a new one. */
export function bundleVolumeFor(imageId: string): string {
  return `sandbox-server-agent-${imageId.replace(/^sha256:/, '').slice(0, 16)}`;
}

/**
 * The bundles of `image` (the agent-server image) on one engine. A volume filled once is trusted
 * while it exists; one that went missing (removed by hand) is filled again.
 */
export function agentBundles(docker: Docker, image: string | undefined): AgentBundles {
  const filled = new Map<string, Promise<void>>();

  async function fill(volume: string, version: string): Promise<void> {
    if (!image) throw new RuntimeError('no agent-server image is configured to bring into other images', true);
    await docker.createVolume({ Name: volume, Labels: { [LABEL_AGENT_BUNDLE]: version } });
    const helper = await docker.createContainer({
      Image: image,
      Entrypoint: ['sh', '-c'],
      Cmd: [FILL_SCRIPT],
      User: '0:0',
      Labels: { [LABEL_AGENT_BUNDLE]: version },
      HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volume, Target: '/mnt' }], AutoRemove: false },
    });
    try {
      await helper.start();
      const { StatusCode } = (await Promise.race([
        helper.wait(),
        new Promise((_, reject) => setTimeout(() => reject(new Error(`filling ${volume} took over ${FILL_TIMEOUT_MS / 1000} s`)), FILL_TIMEOUT_MS).unref()),
      ])) as { StatusCode: number };
      if (StatusCode !== 0) {
        const output = (await helper.logs({ stdout: true, stderr: true, follow: false })).toString('utf8').trim().slice(-500);
        throw new RuntimeError(`filling the agent-server bundle volume ${volume} from ${image} failed (exit ${StatusCode}): ${output}`, false);
      }
    } finally {
      await helper.remove({ force: true }).catch(() => undefined);
    }
  }

  async function exists(volume: string): Promise<boolean> {
    try {
      await docker.getVolume(volume).inspect();
      return true;
    } catch (error) {
      if (statusCodeOf(error) === 404) return false;
      throw toRuntimeError(error, 'volume inspect');
    }
  }

  return {
    async current() {
      if (!image) throw new RuntimeError('no agent-server image is configured to bring into other images', true);
      let info: Docker.ImageInspectInfo;
      try {
        info = await docker.getImage(image).inspect();
      } catch (error) {
        throw toRuntimeError(error, `inspect the agent-server image ${image}`);
      }
      const volume = bundleVolumeFor(info.Id);
      const version = info.Config?.Labels?.[LABEL_AGENT_SERVER_VERSION] ?? info.Id;
      const known = filled.get(volume);
      if (known && (await exists(volume))) {
        await known;
        return { volume, version };
      }
      const filling = fill(volume, version).catch((error: unknown) => {
        filled.delete(volume);
        throw error instanceof RuntimeError ? error : new RuntimeError(`filling the agent-server bundle volume ${volume}: ${dockerMessageOf(error)}`, false);
      });
      filled.set(volume, filling);
      await filling;
      return { volume, version };
    },
  };
}

/**
 * The container options that run the agent-server from the bundle instead of the image's own
 * command: as root (it runs the agent's commands as BROUGHT_AGENT_USER, created when missing),
 * through the bundle's loader, with the bundle mounted read-only. Everything else (environment,
 * working directory, limits) is the image's and the spec's.
 */
export function bringAgentServer(options: Docker.ContainerCreateOptions, bundle: AgentBundle, dataMountPath: string): Docker.ContainerCreateOptions {
  const hostConfig = options.HostConfig ?? {};
  return {
    ...options,
    User: '0:0',
    Entrypoint: [`${BUNDLE_DIR}/lib/ld.so`],
    Cmd: [
      '--library-path',
      `${BUNDLE_DIR}/lib`,
      `${BUNDLE_DIR}/bin/node`,
      `${BUNDLE_DIR}/app/agent-server.js`,
      '--host',
      '0.0.0.0',
      '--port',
      String(AGENT_SERVER_CONTAINER_PORT),
      '--data-dir',
      dataMountPath,
      '--agent-user',
      BROUGHT_AGENT_USER,
      '--create-agent-user',
    ],
    Labels: { ...options.Labels, [LABEL_AGENT_BUNDLE]: bundle.version },
    HostConfig: {
      ...hostConfig,
      Mounts: [
        ...(hostConfig.Mounts ?? []),
        {
          Type: 'volume',
          Source: bundle.volume,
          Target: AGENT_BUNDLE_MOUNT,
          ReadOnly: true,
          VolumeOptions: { NoCopy: true, Labels: { [LABEL_AGENT_BUNDLE]: bundle.version }, DriverConfig: { Name: 'local', Options: {} } },
        },
      ],
    },
  };
}
