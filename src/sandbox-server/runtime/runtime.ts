/**
 * What the reconciler needs from a container runtime. Kept small so a Kubernetes driver can sit
 * beside Docker. Every verb is idempotent: pausing a paused container, removing a missing one,
 * creating when a container with the sandbox's label already exists all succeed.
 */
import type { ContainerState } from '../../contracts/container.js';
import type { RuntimeProbeStatus } from '../../contracts/engine.js';
import type { SandboxNetwork } from '../../contracts/sandbox.js';

/** Labels every container we own carries; ownership is decided by label, never by name. */
export const LABEL_SANDBOX_ID = 'sandbox-server.id';
export const LABEL_SPEC_ID = 'sandbox-server.spec';
/** Distinguishes control planes sharing one engine (e.g. parallel test runs). */
export const LABEL_INSTANCE = 'sandbox-server.instance';
/**
 * The installation (one database) that made a resource: only its own are swept as leftovers.
 * Resources of a release before this label carry none.
 */
export const LABEL_INSTALLATION = 'sandbox-server.installation';

/**
 * The labels that say who owns a resource: the instance and, when known, the installation. A
 * runtime without an installation id (tests of the runtime alone) labels as a release before it did.
 */
export function ownerLabels(instanceId: string, installationId: string | undefined): Record<string, string> {
  return installationId === undefined ? { [LABEL_INSTANCE]: instanceId } : { [LABEL_INSTANCE]: instanceId, [LABEL_INSTALLATION]: installationId };
}

/** What every observation of a labelled resource says of its owner. */
export interface Owned {
  /** Its LABEL_INSTALLATION; absent on resources of a release before that label. */
  installation?: string;
}
/** `sandbox-server.port.<name>=<container port>`: lets an observation name its published ports. */
export const LABEL_PORT_PREFIX = 'sandbox-server.port.';
/** Set on the agent-server image we build (containers inherit it): which agent-server it runs. */
export const LABEL_AGENT_SERVER_VERSION = 'sandbox-server.agent-server-version';
/** Carried by a snapshot's image and volume: the snapshot they belong to. */
export const LABEL_SNAPSHOT_ID = 'sandbox-server.snapshot';
/**
 * Carried by the short-lived container that copies a data volume (into a snapshot, or out of one
 * into a new sandbox's volume): the volume it copies into. With the instance and snapshot labels
 * it lets a sweep find a copy that a crash left behind.
 */
export const LABEL_VOLUME_COPY = 'sandbox-server.volume-copy';

export interface ContainerObservation extends Owned {
  containerId: string;
  sandboxId: string;
  state: ContainerState;
  exitCode: number | null;
  /**
   * The kernel killed a process of the container at its memory limit (Docker's OOMKilled), or the
   * driver ended a container such a kill left stuck at its limit (gVisor's).
   */
  oomKilled: boolean;
  /** container port name -> host port on the engine's advertise host */
  hostPorts: Record<string, number>;
  /**
   * The agent-server version it runs: its image's LABEL_AGENT_SERVER_VERSION, or the bundle's
   * brought into it (LABEL_AGENT_BUNDLE); null for a container that runs a command of its own.
   */
  agentServerVersion: string | null;
  /** When it last stopped (ms since the epoch), from inspect; null while it runs or from a listing. */
  finishedAt: number | null;
}

export interface ContainerRequest {
  sandboxId: string;
  specId: string;
  image: string;
  command: string[] | null;
  env: Record<string, string>;
  /**
   * The spec's initial_env. For an image of our agent-server it goes to a file only root reads
   * (INITIAL_ENV_FILE), never the container's environment, which gVisor shows the agent; other
   * images get it in their environment.
   */
  initialEnv: Record<string, string>;
  /** The initial_env entries that are secret: the agent-server masks their values in what the agent prints. */
  secretEnv?: readonly string[];
  workingDir: string;
  exposedPorts: { name: string; container_port: number }[];
  cpus: number | null;
  memoryMb: number | null;
  pidsLimit: number | null;
  /** The engine's OCI runtime (runc, runsc). */
  runtime: string;
  /** Named volume mounted for the agent-server's data so events survive container restarts. */
  dataVolume: { name: string; mountPath: string };
  /** The sandbox's own network, created with the container (or adopted) and its only network. */
  network: { name: string; access: SandboxNetwork };
}

/** What a running sandbox holds on the engine's disk, in bytes. */
export interface DiskUsage {
  /** Its container's writable layer: every file it added or changed outside its volumes. */
  writableBytes: number;
  /** Its data volume as `du` counts it from inside; null when the image has no `du`. */
  dataBytes: number | null;
}

/** A network carrying our instance label. */
export interface NetworkObservation extends Owned {
  name: string;
  /** The sandbox whose network it is, or that uses it; '' for none. */
  sandboxId: string;
}

/** A sandbox's data volume carrying our instance label that no container uses. */
export interface VolumeObservation extends Owned {
  name: string;
  sandboxId: string;
}

/** A container copying a data volume (see LABEL_VOLUME_COPY). */
export interface VolumeCopyObservation extends Owned {
  containerId: string;
  /** Still copying; a copy whose control plane died runs to its end and then stops. */
  running: boolean;
}

/** What to snapshot: a sandbox's container and its data volume. */
export interface SnapshotRequest {
  snapshotId: string;
  sandboxId: string;
  specId: string;
  containerId: string;
  dataVolume: string;
  /** Refuse (SnapshotTooLargeError) a sandbox holding more than this, before copying; absent, no limit. */
  maxBytes?: number;
  /**
   * Told of each phase as it ends, awaited before the next begins; a rejection fails the snapshot.
   * A callback rather than a write keeps the runtime free of the database.
   */
  onProgress?: (progress: SnapshotProgress) => Promise<void>;
}

/**
 * A phase of a snapshot: `measured` (writable layer and /data, before copying), `copied` (the
 * first pass of /data, while the sandbox runs), `paused` (for the consistent cut), `committed` (the
 * container's image, of `bytes`). The catch-up pass ends the snapshot.
 */
export interface SnapshotProgress {
  phase: 'measured' | 'copied' | 'paused' | 'committed';
  bytes?: number;
}

/** Where a snapshot lives in the engine: an image of the container's files, a copy of its data volume. */
export interface SnapshotArtifacts {
  image: string;
  volume: string;
}

/** A snapshot's artifacts as the engine lists them by label; either may be missing after a crash. */
export interface SnapshotObservation extends Owned {
  snapshotId: string;
  image: string | null;
  volume: string | null;
}

/** The outcome of one OCI runtime's self-test on an engine (`probeRuntime`). */
export interface RuntimeProbe {
  runtime: string;
  status: RuntimeProbeStatus;
  /** Why it failed (the failing step's own message), or why it could not be tested; null when ok. */
  detail: string | null;
  /** The image it ran; null when none could. */
  image: string | null;
  durationMs: number;
  probedAt: Date;
}

/**
 * Whether an engine has an image, and if so why a sandbox of it could not run the agent-server
 * (null: it can, as our own image or with the agent-server brought into it).
 */
export type ImageCheck = { present: false } | { present: true; unfit: string | null };

/** The action of the event `watch` reports, with no sandbox, when it lost the engine. */
export const ENGINE_DISCONNECTED = 'engine-disconnected';

export interface RuntimeEvent {
  sandboxId: string;
  /** The container the event is about. */
  containerId: string;
  action: string;
}

/**
 * A runtime call that failed. `final` failures (missing image, a spec the engine rejects, a name
 * held by a container we do not own) will fail the same way again, so the reconciler records them
 * and stops; all others (socket errors, engine hiccups) are retried with back-off.
 */
export class RuntimeError extends Error {
  constructor(
    message: string,
    readonly final: boolean,
  ) {
    super(message);
    this.name = 'RuntimeError';
  }
}

/** A sandbox too large to snapshot: refused before anything was copied. */
export class SnapshotTooLargeError extends RuntimeError {
  constructor(
    readonly heldBytes: number,
    readonly maxBytes: number,
  ) {
    const mb = (bytes: number) => Math.ceil(bytes / (1024 * 1024)).toLocaleString('en-US');
    super(`the sandbox holds ${mb(heldBytes)} MB (writable layer and data volume), over the snapshot limit of ${mb(maxBytes)} MB (SNAPSHOT_MAX_MB)`, true);
  }
}

export interface SandboxRuntime {
  /** The OCI runtimes the engine has registered (`docker info`). */
  runtimes(): Promise<string[]>;
  /**
   * Self-tests the OCI runtime `runtime` with a short container of `image` (no network, removed
   * after): `ls -la`, `stat`, a file written and read back, a child process. Never throws: a
   * runtime the engine lacks, an image it cannot run, a step that fails are all `failed`.
   */
  probeRuntime(runtime: string, image: string): Promise<RuntimeProbe>;
  /** The id of the image `image` names on the engine now (it changes when the tag is rebuilt); null when absent. */
  imageId(image: string): Promise<string | null>;
  /** Whether the engine has `image`, and whether a sandbox could run in it (see ImageCheck). */
  checkImage(image: string): Promise<ImageCheck>;
  /**
   * Makes `image` present on the engine, pulling it (with the registry credentials configured for
   * its host) when it is not; `onProgress` is told how the pull goes, a line at a time. A pull the
   * registry refuses (no such image, bad credentials) fails for good.
   */
  ensureImage(image: string, onProgress?: (line: string) => void): Promise<void>;
  /** Creates and starts the container; returns its observation. */
  create(request: ContainerRequest): Promise<ContainerObservation>;
  /** Starts a created or stopped container. */
  start(containerId: string): Promise<void>;
  pause(containerId: string): Promise<void>;
  /** Kills a running container at once (SIGKILL); one that does not run, or is gone, is success. */
  stop(containerId: string): Promise<void>;
  /** What a running container holds on disk, its data volume mounted at `dataMountPath` included; undefined when it does not run. */
  diskUsage(containerId: string, dataMountPath: string): Promise<DiskUsage | undefined>;
  unpause(containerId: string): Promise<void>;
  /** Removes the container (killing it if it runs). */
  remove(containerId: string): Promise<void>;
  /** Removes a sandbox's data volume; a missing volume is success. */
  removeVolume(name: string): Promise<void>;
  /**
   * Removes the sandbox's networks once no container is attached (a spare network it used may go
   * back among the spares instead); none is success.
   */
  removeNetworks(sandboxId: string): Promise<void>;
  /** Removes one network `listNetworks` reported, once no container is attached; a missing one is success. */
  removeNetwork(name: string): Promise<void>;
  /** Called when the control plane stops using this engine: ends background work (making spare networks) and removes what only it could use. */
  close(): Promise<void>;
  /**
   * Every network carrying our instance label, except the spares kept ready (a network with no
   * sandbox is one no sandbox uses).
   */
  listNetworks(): Promise<NetworkObservation[]>;
  /**
   * The sandbox data volumes carrying our instance label that no container uses: a sandbox's
   * volume once its container is gone, or one restored from a snapshot before its sandbox's row.
   */
  listUnusedVolumes(): Promise<VolumeObservation[]>;
  /** The containers copying data volumes, carrying our instance label; `remove` removes one. */
  listVolumeCopies(): Promise<VolumeCopyObservation[]>;
  /**
   * Every sandbox container carrying our instance label (volume copies are not sandboxes'); with
   * `sandboxId`, only that sandbox's, as the engine filters them.
   */
  list(sandboxId?: string): Promise<ContainerObservation[]>;
  inspect(containerId: string): Promise<ContainerObservation | undefined>;
  /** The last `lines` lines the container wrote (stdout and stderr interleaved); '' when it is gone. */
  logs(containerId: string, lines: number): Promise<string>;
  /**
   * Snapshots the container's files and its data volume at one instant: a running container is
   * paused around it and unpaused after, a paused one stays paused. Answers the artifacts and
   * their size in bytes (the container's changes plus the volume's files).
   */
  snapshot(request: SnapshotRequest): Promise<SnapshotArtifacts & { sizeBytes: number }>;
  /** Creates the data volume `name` of sandbox `sandboxId` as a copy of snapshot `id`'s volume. */
  restoreVolume(snapshot: SnapshotArtifacts & { id: string }, target: { sandboxId: string; name: string }): Promise<void>;
  /** Removes a snapshot's image and volume; missing ones are success. */
  removeSnapshot(snapshot: { image: string | null; volume: string | null }): Promise<void>;
  /** Every snapshot image and volume carrying our instance label. */
  listSnapshots(): Promise<SnapshotObservation[]>;
  /**
   * Whether the engine answers on a new connection: one shutting down serves the connections it has
   * (and reports its containers' exits on them) but takes no new one. Never throws.
   */
  takesNewConnections(): Promise<boolean>;
  /**
   * Lifecycle events of our containers, and ENGINE_DISCONNECTED when the engine went away (it
   * reconnects by itself); the returned function stops the stream.
   */
  watch(onEvent: (event: RuntimeEvent) => void): () => void;
}
