import type Docker from 'dockerode';
import { DEFAULT_LOG_ROTATION, logConfigFor } from '../runtime/container-logs.js';
import { toRuntimeError } from '../runtime/docker-errors.js';
import { LABEL_SNAPSHOT_ID, LABEL_VOLUME_COPY, ownerLabels } from '../runtime/runtime.js';
import { copyImage } from '../image/index.js';

/** A snapshot's artifacts on its engine (runtime.snapshot's answer), and the labels its volume carries. */
export interface SnapshotToCopy {
  id: string;
  image: string;
  volume: string;
  volumeLabels: Record<string, string>;
}

export interface CopySnapshotOptions {
  from: Docker;
  to: Docker;
  /** The image the helper containers run: one we built and trust, present on both engines (the agent-server image). */
  helperImage: string;
  instanceId: string;
  /** The installation the copies are labelled with (see ownerLabels). */
  installationId?: string;
  onProgress(line: string): void;
}

/**
 * How long a copy's helper container lives at most. It only holds the volume mounted while the
 * control plane streams the files through the engines' APIs; one whose control plane died ends
 * by itself and is then swept like any finished volume copy.
 */
const HELPER_LIFETIME_SECONDS = 3600;

/**
 * Copies a snapshot from one engine to another, so that a sandbox can be recreated from it there:
 * its image by `docker save` into `docker load`, its volume as a tar archive read out of a helper
 * container on the source (the volume mounted read-only) and written into one on the target (a new
 * volume with the same name and labels; owners and modes kept). No registry and no network between
 * the engines: both streams pass through the control plane. Helpers and the new volume carry our
 * instance, snapshot and volume-copy labels from the start, so a crash leaves nothing the target's
 * sweep cannot find and remove once no snapshot row claims it.
 */
export async function copySnapshot(options: CopySnapshotOptions, snapshot: SnapshotToCopy): Promise<void> {
  await copyImage(options.from, options.to, snapshot.image, options.onProgress);
  options.onProgress(`copying volume ${snapshot.volume}`);
  // Mounting a missing volume would create an empty one, unlabelled: a snapshot without its files.
  await options.from
    .getVolume(snapshot.volume)
    .inspect()
    .catch((error: unknown) => {
      throw toRuntimeError(error, `find volume ${snapshot.volume}`, [404]);
    });
  const source = await startHelper(options, options.from, snapshot, { ReadOnly: true });
  try {
    const target = await startHelper(options, options.to, snapshot, {
      VolumeOptions: { NoCopy: true, Labels: { ...snapshot.volumeLabels, ...ownerLabels(options.instanceId, options.installationId) }, DriverConfig: { Name: 'local', Options: {} } },
    });
    try {
      const archive = await source.getArchive({ path: MOUNT }).catch((error: unknown) => {
        throw toRuntimeError(error, 'read volume archive');
      });
      await target.putArchive(archive, { path: '/' }).catch((error: unknown) => {
        throw toRuntimeError(error, 'write volume archive');
      });
    } finally {
      await target.remove({ force: true }).catch(() => undefined);
    }
  } finally {
    await source.remove({ force: true }).catch(() => undefined);
  }
  options.onProgress(`copied volume ${snapshot.volume}`);
}

/** Where the helpers mount the volume; the archive's entries are named `volume/...`. */
const MOUNT = '/volume';

async function startHelper(
  options: CopySnapshotOptions,
  docker: Docker,
  snapshot: SnapshotToCopy,
  mount: Pick<Docker.MountSettings, 'ReadOnly' | 'VolumeOptions'>,
): Promise<Docker.Container> {
  let helper: Docker.Container;
  try {
    helper = await docker.createContainer({
      Image: options.helperImage,
      Entrypoint: ['sleep', String(HELPER_LIFETIME_SECONDS)],
      Cmd: [],
      User: '0:0',
      WorkingDir: '/',
      NetworkDisabled: true,
      Labels: { ...ownerLabels(options.instanceId, options.installationId), [LABEL_SNAPSHOT_ID]: snapshot.id, [LABEL_VOLUME_COPY]: snapshot.volume },
      HostConfig: {
        NetworkMode: 'none',
        Mounts: [{ Type: 'volume', Source: snapshot.volume, Target: MOUNT, ...mount }],
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges:true'],
        LogConfig: logConfigFor(DEFAULT_LOG_ROTATION),
      },
    });
  } catch (error) {
    throw toRuntimeError(error, 'create volume copy helper', [400, 404]);
  }
  try {
    await helper.start();
  } catch (error) {
    await helper.remove({ force: true }).catch(() => undefined);
    throw toRuntimeError(error, 'start volume copy helper');
  }
  return helper;
}
