import type Docker from 'dockerode';
import { DEFAULT_LOG_ROTATION, logConfigFor } from './container-logs.js';
import { demultiplexLogs } from './docker-logs.js';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import { snapshotImageFor, snapshotVolumeFor } from './resource-names.js';
import {
  LABEL_INSTALLATION,
  LABEL_INSTANCE,
  LABEL_SANDBOX_ID,
  LABEL_SNAPSHOT_ID,
  LABEL_SPEC_ID,
  LABEL_VOLUME_COPY,
  RuntimeError,
  type SandboxRuntime,
  type SnapshotObservation,
  type SnapshotRequest,
  SnapshotTooLargeError,
} from './runtime.js';

export interface DockerSnapshotOptions {
  docker: Docker;
  instanceId: string;
  /** The labels naming the owner (ownerLabels): every image, volume and helper made carries them. */
  owner: Record<string, string>;
  /**
   * The image whose `cp` copies volumes: one we built and trust (the agent-server image), never a
   * snapshot's own image, whose files the agent may have replaced.
   */
  copyImage: string | undefined;
}

type SnapshotVerbs = Pick<SandboxRuntime, 'snapshot' | 'restoreVolume' | 'removeSnapshot' | 'listSnapshots' | 'listVolumeCopies'>;

/** The copy's helper holds only what `cp -a` needs to copy any file and keep its owner and mode. */
const COPY_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'];
/** Copies the volume at /from into /to, then prints the copy's size in bytes. */
const COPY_SCRIPT = 'cp -a /from/. /to/ && du -sb /to';
/**
 * The first pass, while the sandbox runs: copies what it can. A file the agent removes or changes
 * meanwhile may fail or come out torn; the second pass, with the sandbox paused, puts each right and
 * fails on any error, so this one's errors are not the snapshot's.
 */
const FIRST_PASS_SCRIPT = 'cp -a /from/. /to/ 2>/dev/null; du -sb /to';
/** Prints the kilobytes the volume at /from holds, counted as the disk limit's watchdog counts them. */
const MEASURE_SCRIPT = 'du -skx /from | cut -f1';
/**
 * The second pass, while the sandbox is paused: makes /to what /from is now, from the first
 * pass's copy. It removes what is gone from /from or changed kind (file, directory, link, or a
 * link's target), then copies what is missing or newer (`cp -a` kept each file's mtime, so a file
 * written since has a newer one), then prints the copy's size in bytes.
 */
const SYNC_SCRIPT = `set -e
cd /to
find . -mindepth 1 -depth -exec sh -c '
for f; do
  s="/from/\${f#./}"
  if [ -L "$s" ] || [ -L "$f" ]; then
    { [ -L "$s" ] && [ -L "$f" ] && [ "$(readlink "$s")" = "$(readlink "$f")" ]; } || rm -rf "$f"
  elif [ -d "$s" ] || [ -d "$f" ]; then
    { [ -d "$s" ] && [ -d "$f" ]; } || rm -rf "$f"
  elif [ ! -e "$s" ]; then
    rm -rf "$f"
  fi
done' sh {} +
cp -a -u /from/. /to/
du -sb /to`;

/**
 * Snapshots on Docker: `docker commit` of the container (the engine leaves volumes out of it) and a
 * copy of the data volume into a new labelled volume, of one instant so that the files and the
 * event log agree. The volume is copied in two passes: all of it while the container runs, then,
 * with the container paused for the commit, only what changed since; so the pause lasts as long
 * as the commit and the changes, not the whole copy. Image and volume carry the instance and snapshot
 * labels, so that they are found again after a restart and swept when no snapshot row claims them.
 */
export function createDockerSnapshots(options: DockerSnapshotOptions): SnapshotVerbs {
  const { docker, instanceId, owner } = options;
  return {
    async snapshot(request) {
      const container = docker.getContainer(request.containerId);
      const image = snapshotImageFor(request.snapshotId);
      const volume = snapshotVolumeFor(request.snapshotId);
      const labels = { ...owner, [LABEL_SNAPSHOT_ID]: request.snapshotId, [LABEL_SPEC_ID]: request.specId };
      const volumeLabels = { [LABEL_SNAPSHOT_ID]: request.snapshotId, [LABEL_SPEC_ID]: request.specId };
      const target = { name: volume, labels: volumeLabels };
      const progress = request.onProgress ?? (async () => undefined);
      let wasRunning = false;
      try {
        await progress({ phase: 'measured', bytes: await measure(options, request, target, await writableBytesOf(container)) });
        await progress({ phase: 'copied', bytes: await copyVolume(options, request.dataVolume, target, request.snapshotId, FIRST_PASS_SCRIPT) });
        // Paused only for the consistent cut: the commit and what changed since the first pass.
        wasRunning = await pauseIfRunning(container);
        await progress({ phase: 'paused' });
        const writableBytes = await writableBytesOf(container);
        const [repo, tag] = image.split(':') as [string, string];
        await container.commit({
          repo,
          tag,
          pause: false,
          changes: `LABEL ${Object.entries(labels)
            .map(([key, value]) => `${key}=${value}`)
            .join(' ')}`,
        });
        await progress({ phase: 'committed', bytes: writableBytes });
        const volumeBytes = await copyVolume(options, request.dataVolume, target, request.snapshotId, SYNC_SCRIPT);
        return { image, volume, sizeBytes: writableBytes + volumeBytes };
      } catch (error) {
        await Promise.allSettled([removeImage(docker, image), removeVolume(docker, volume)]);
        if (error instanceof RuntimeError) throw error;
        throw toRuntimeError(error, 'snapshot', [404]);
      } finally {
        // An unpause that fails leaves a paused container wanted RUNNING: the reconciler unpauses it.
        if (wasRunning) await container.unpause().catch(() => undefined);
      }
    },

    async restoreVolume(snapshot, target) {
      try {
        await copyVolume(options, snapshot.volume, { name: target.name, labels: { [LABEL_SANDBOX_ID]: target.sandboxId } }, snapshot.id);
      } catch (error) {
        await removeVolume(docker, target.name).catch(() => undefined);
        throw error;
      }
    },

    async removeSnapshot(snapshot) {
      // Each is removed even when the other cannot be yet.
      const results = await Promise.allSettled([
        snapshot.image ? removeImage(docker, snapshot.image) : undefined,
        snapshot.volume ? removeVolume(docker, snapshot.volume) : undefined,
      ]);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    },

    async listVolumeCopies() {
      try {
        const helpers = await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_VOLUME_COPY] } });
        return helpers.map((helper) => ({ containerId: helper.Id, running: helper.State === 'running', installation: helper.Labels[LABEL_INSTALLATION] }));
      } catch (error) {
        throw toRuntimeError(error, 'list volume copies');
      }
    },

    listSnapshots: () => listSnapshots(docker, instanceId),
  };
}

/**
 * Runs the trusted copy helper's `script`, without network, from one volume into another, which
 * it creates with `to.labels` unless it exists; answers its exit status and
 * output. The helper and the new volume carry our instance label from the start, so that a
 * crash at any point leaves nothing the reconciler's sweep cannot find.
 */
async function runCopyHelper(
  { docker, owner, copyImage }: DockerSnapshotOptions,
  from: string,
  to: { name: string; labels: Record<string, string> },
  snapshotId: string,
  script: string,
  env: string[] = [],
): Promise<{ statusCode: number; output: string }> {
  if (!copyImage) throw new RuntimeError('no image is configured to copy volumes with', true);
  // An existing volume is mounted as it is: the engine applies these only when it creates one.
  const volumeOptions = { NoCopy: true, Labels: { ...to.labels, ...owner }, DriverConfig: { Name: 'local', Options: {} } };
  let helper: Docker.Container;
  try {
    helper = await docker.createContainer({
      Image: copyImage,
      Entrypoint: ['sh', '-c', script],
      Cmd: [],
      Env: env,
      User: '0:0',
      WorkingDir: '/',
      NetworkDisabled: true,
      Labels: { ...owner, [LABEL_SNAPSHOT_ID]: snapshotId, [LABEL_VOLUME_COPY]: to.name },
      HostConfig: {
        NetworkMode: 'none',
        Mounts: [
          { Type: 'volume', Source: from, Target: '/from', ReadOnly: true },
          { Type: 'volume', Source: to.name, Target: '/to', VolumeOptions: volumeOptions },
        ],
        CapDrop: ['ALL'],
        CapAdd: COPY_CAPABILITIES,
        SecurityOpt: ['no-new-privileges:true'],
        LogConfig: logConfigFor(DEFAULT_LOG_ROTATION),
      },
    });
  } catch (error) {
    throw toRuntimeError(error, 'create volume copy helper', [400, 404]);
  }
  try {
    await helper.start();
    const { StatusCode } = (await helper.wait()) as { StatusCode: number };
    const output = demultiplexLogs(Buffer.from(await helper.logs({ stdout: true, stderr: true, follow: false }))).trim();
    return { statusCode: StatusCode, output };
  } catch (error) {
    throw toRuntimeError(error, 'copy volume');
  } finally {
    await helper.remove({ force: true }).catch(() => undefined);
  }
}

/** Runs a copy helper's `script` that must succeed and print a size in bytes last; answers it. */
async function copyVolume(options: DockerSnapshotOptions, from: string, to: { name: string; labels: Record<string, string> }, snapshotId: string, script = COPY_SCRIPT): Promise<number> {
  const { statusCode, output } = await runCopyHelper(options, from, to, snapshotId, script);
  if (statusCode !== 0) throw new RuntimeError(`copying volume ${from} failed (exit ${statusCode}): ${output}`, false);
  const bytes = Number.parseInt(output.split('\n').at(-1) ?? '', 10);
  return Number.isFinite(bytes) ? bytes : 0;
}

/**
 * What the snapshot will hold: the writable layer (`writableBytes`) and the volume; refuses one
 * over `maxBytes` before anything is copied.
 */
async function measure(options: DockerSnapshotOptions, request: SnapshotRequest, to: { name: string; labels: Record<string, string> }, writableBytes: number): Promise<number> {
  const { maxBytes } = request;
  if (maxBytes !== undefined && writableBytes > maxBytes) throw new SnapshotTooLargeError(writableBytes, maxBytes);
  const { statusCode, output } = await runCopyHelper(options, request.dataVolume, to, request.snapshotId, MEASURE_SCRIPT);
  const volumeKb = Number.parseInt(output.split('\n').at(-1) ?? '', 10);
  if (statusCode !== 0 || !Number.isFinite(volumeKb)) throw new RuntimeError(`measuring volume ${request.dataVolume} failed (exit ${statusCode}): ${output}`, false);
  const held = writableBytes + volumeKb * 1024;
  if (maxBytes !== undefined && held > maxBytes) throw new SnapshotTooLargeError(held, maxBytes);
  return held;
}

/** The bytes the container changed, what a commit of it holds. */
async function writableBytesOf(container: Docker.Container): Promise<number> {
  // `size` is a query flag the types lack.
  const sizeQuery = { size: true } as Docker.ContainerInspectOptions;
  const { SizeRw } = (await container.inspect(sizeQuery)) as Docker.ContainerInspectInfo & { SizeRw?: number };
  return SizeRw ?? 0;
}

async function removeImage(docker: Docker, image: string): Promise<void> {
  try {
    await docker.getImage(image).remove();
  } catch (error) {
    // 404: already gone. 409: a container still uses it; the caller tries again later.
    if (statusCodeOf(error) === 404) return;
    throw toRuntimeError(error, 'remove image');
  }
}

async function removeVolume(docker: Docker, name: string): Promise<void> {
  try {
    await docker.getVolume(name).remove();
  } catch (error) {
    if (statusCodeOf(error) === 404) return;
    throw toRuntimeError(error, 'remove volume');
  }
}

/** Whether the container was running (and is now paused); a paused one is left as it is. */
async function pauseIfRunning(container: Docker.Container): Promise<boolean> {
  try {
    if ((await container.inspect()).State.Status !== 'running') return false;
    await container.pause();
    return true;
  } catch (error) {
    throw toRuntimeError(error, 'pause for snapshot', [404, 409]);
  }
}

/** The snapshots' images and volumes on the engine, by snapshot. */
async function listSnapshots(docker: Docker, instanceId: string): Promise<SnapshotObservation[]> {
    const filters = { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_SNAPSHOT_ID] };
    let images: Docker.ImageInfo[];
    let volumes: Docker.VolumeInspectInfo[];
    try {
      images = await docker.listImages({ filters });
      volumes = (await docker.listVolumes({ filters })).Volumes ?? [];
    } catch (error) {
      throw toRuntimeError(error, 'list snapshots');
    }
    const found = new Map<string, SnapshotObservation>();
    const entry = (snapshotId: string, installation: string | undefined) => {
      const observation = found.get(snapshotId) ?? { snapshotId, image: null, volume: null, installation };
      found.set(snapshotId, observation);
      return observation;
    };
    for (const image of images) {
      const snapshotId = image.Labels?.[LABEL_SNAPSHOT_ID];
      if (snapshotId) entry(snapshotId, image.Labels?.[LABEL_INSTALLATION]).image = image.RepoTags?.find((t) => t !== '<none>:<none>') ?? image.Id;
    }
    for (const volume of volumes) {
      const snapshotId = volume.Labels?.[LABEL_SNAPSHOT_ID];
      if (snapshotId) entry(snapshotId, volume.Labels?.[LABEL_INSTALLATION]).volume = volume.Name;
    }
    return [...found.values()];
}
