import { randomBytes } from 'node:crypto';
import type { ContainerState } from '../../src/contracts/container.js';
import { AGENT_SERVER_CONTAINER_PORT, AGENT_SERVER_PORT_NAME } from '../../src/contracts/sandbox.js';
import {
  type ContainerObservation,
  type ContainerRequest,
  type DiskUsage,
  ENGINE_DISCONNECTED,
  type NetworkObservation,
  type RuntimeEvent,
  RuntimeError,
  type SandboxRuntime,
  type SnapshotObservation,
} from '../../src/sandbox-server/runtime/runtime.js';

type Verb =
  | 'create'
  | 'start'
  | 'pause'
  | 'unpause'
  | 'stop'
  | 'remove'
  | 'removeVolume'
  | 'removeNetworks'
  | 'removeNetwork'
  | 'list'
  | 'listNetworks'
  | 'listUnusedVolumes'
  | 'listVolumeCopies'
  | 'inspect'
  | 'logs'
  | 'snapshot'
  | 'restoreVolume'
  | 'removeSnapshot'
  | 'listSnapshots'
  | 'close';

/** Test controls on top of the runtime contract: things that happen to containers behind our back. */
export interface FakeRuntimeControls {
  /** Every call made, in order, e.g. `{ verb: 'create', target: sandboxId }`. */
  readonly calls: { verb: Verb; target: string }[];
  /** Snapshot of the containers that exist now. */
  containers(): ContainerObservation[];
  /** Names of the data volumes that exist now. */
  volumes(): string[];
  /** The sandbox networks that exist now. */
  networks(): NetworkObservation[];
  /** A network with our labels appears that this control plane did not create in this process. */
  addNetwork(sandboxId: string): void;
  /** A data volume of sandbox `sandboxId` appears that no container uses (a restore cut short). */
  addVolume(name: string, sandboxId: string): void;
  /** A volume copy's container appears (its control plane died), still running or ended. */
  addVolumeCopy(running: boolean): string;
  /** The containers of volume copies that exist now, by id. */
  volumeCopies(): string[];
  /** The container dies (killed from outside, or at its memory limit with `oomKilled`), now or at `finishedAt`. */
  kill(containerId: string, exitCode?: number, oomKilled?: boolean, finishedAt?: number): void;
  /** Someone runs `docker rm -f` on it. */
  removeBehindBack(containerId: string): void;
  /** A container with our labels appears that this control plane did not create in this process. */
  addContainer(sandboxId: string, state?: ContainerState): ContainerObservation;
  /** The engine goes away for a moment: watchers get ENGINE_DISCONNECTED. */
  disconnect(): void;
  /** The engine shuts down (true): it still answers every call, as on the connections it has, but takes no new connection. */
  refuseNewConnections(refuse: boolean): void;
  /** The container writes `text` to its log. */
  writeLog(containerId: string, text: string): void;
  /** What `diskUsage` answers for the container from now on (nothing written until then). */
  setDiskUsage(containerId: string, usage: DiskUsage): void;
  /** The next call of `verb` fails with `error`. */
  failNext(verb: Verb, error: Error): void;
  /**
   * Creates wait until the returned function is called (a create "in flight"): before the container
   * exists, or, `afterCreated`, with it created and not yet started (the Docker driver writing its key in).
   */
  holdCreates(afterCreated?: boolean): () => void;
  /** Snapshots keep their container paused until the returned function is called (a snapshot under way). */
  holdSnapshots(): () => void;
  /** The image's tag now names another image (it was rebuilt). */
  rebuildImage(image: string): void;
  /** The self-test of OCI runtime `runtime` fails from now on, saying `detail` (a broken gVisor). */
  failProbe(runtime: string, detail: string): void;
  /** The engine has `image` and a sandbox cannot run in it, `reason` says why (checkImage, create); or, with `reason` null, lacks it. */
  setImage(image: string, reason: string | null | 'absent'): void;
}

export type FakeRuntime = SandboxRuntime & FakeRuntimeControls;

/**
 * An in-memory runtime with the same idempotency rules as the Docker driver (one container per
 * sandbox, "already in that state" is success), for reconciler tests that need no engine.
 */
export function createFakeRuntime(): FakeRuntime {
  const containers = new Map<string, ContainerObservation>();
  const diskUsage = new Map<string, DiskUsage>();
  /** Volume name -> the sandbox whose data it holds; null for a snapshot's. */
  const volumes = new Map<string, string | null>();
  /** A volume copy's container id -> whether it still runs. */
  const copies = new Map<string, boolean>();
  /** Network name -> its sandbox. */
  const networks = new Map<string, string>();
  const images = new Map<string, string>();
  const watchers = new Set<(event: RuntimeEvent) => void>();
  const failures = new Map<Verb, Error>();
  const calls: { verb: Verb; target: string }[] = [];
  const logs = new Map<string, string>();
  /** The ports each container exposes, published again (on new host ports) at every start. */
  const exposedPorts = new Map<string, ContainerRequest['exposedPorts']>();
  const imageIds = new Map<string, string>();
  /** Images set unfit (a reason) or absent; every other image is present and fit. */
  const imageChecks = new Map<string, string | null | 'absent'>();
  /** OCI runtime -> why its self-test fails. */
  const failingProbes = new Map<string, string>();
  let refusingNewConnections = false;
  let held: Promise<void> | undefined;
  let heldAfterCreated = false;
  let heldSnapshots: Promise<void> | undefined;
  let nextHostPort = 40_000;

  const emit = (container: Pick<ContainerObservation, 'sandboxId' | 'containerId'>, action: string) => {
    const { sandboxId, containerId } = container;
    for (const watcher of watchers) queueMicrotask(() => watcher({ sandboxId, containerId, action }));
  };

  /** Records the call, yields like real I/O would, and throws a failure planted with failNext. */
  async function enter(verb: Verb, target: string): Promise<void> {
    calls.push({ verb, target });
    await Promise.resolve();
    const failure = failures.get(verb);
    if (failure) {
      failures.delete(verb);
      throw failure;
    }
  }

  function existing(containerId: string): ContainerObservation {
    const container = containers.get(containerId);
    if (!container) throw new RuntimeError(`no such container ${containerId}`, false);
    return container;
  }

  function publish(containerId: string): Record<string, number> {
    return Object.fromEntries((exposedPorts.get(containerId) ?? []).map((port) => [port.name, nextHostPort++]));
  }

  function add(sandboxId: string, state: ContainerState, ports: ContainerRequest['exposedPorts']): ContainerObservation {
    const containerId = randomBytes(32).toString('hex');
    exposedPorts.set(containerId, ports);
    const container: ContainerObservation = {
      containerId,
      sandboxId,
      state,
      exitCode: null,
      oomKilled: false,
      hostPorts: state === 'running' || state === 'paused' ? publish(containerId) : {},
      agentServerVersion: null,
      finishedAt: null,
    };
    containers.set(containerId, container);
    return container;
  }

  return {
    calls,

    async runtimes() {
      return ['runc', 'runsc'];
    },

    async probeRuntime(runtime, image) {
      const detail = failingProbes.get(runtime) ?? null;
      return { runtime, status: detail === null ? 'ok' : 'failed', detail, image, durationMs: 0, probedAt: new Date() };
    },

    failProbe(runtime, detail) {
      failingProbes.set(runtime, detail);
    },

    async takesNewConnections() {
      return !refusingNewConnections;
    },

    refuseNewConnections(refuse) {
      refusingNewConnections = refuse;
    },

    async imageId(image) {
      return imageIds.get(image) ?? `sha256:fake-${image}`;
    },

    async checkImage(image) {
      const set = imageChecks.get(image);
      return set === 'absent' ? { present: false } : { present: true, unfit: set ?? null };
    },

    async ensureImage(image) {
      if (imageChecks.get(image) === 'absent') throw new RuntimeError(`pulling image ${image} failed: not found`, true);
    },

    setImage(image, reason) {
      imageChecks.set(image, reason);
    },

    async create(request) {
      await enter('create', request.sandboxId);
      if (held && !heldAfterCreated) await held;
      const same = [...containers.values()].find((c) => c.sandboxId === request.sandboxId);
      if (same) return { ...same };
      const unfit = imageChecks.get(request.image);
      if (unfit === 'absent') throw new RuntimeError(`docker create failed: No such image: ${request.image}`, true);
      if (typeof unfit === 'string') throw new RuntimeError(unfit, true);
      volumes.set(request.dataVolume.name, request.sandboxId);
      networks.set(request.network.name, request.sandboxId);
      const container = add(request.sandboxId, 'created', request.exposedPorts);
      emit(container, 'create');
      if (held && heldAfterCreated) await held;
      Object.assign(container, { state: 'running', hostPorts: publish(container.containerId) });
      emit(container, 'start');
      return { ...container };
    },

    async start(containerId) {
      await enter('start', containerId);
      const container = existing(containerId);
      if (container.state === 'running') return;
      container.state = 'running';
      container.exitCode = null;
      container.oomKilled = false;
      container.finishedAt = null;
      container.hostPorts = publish(containerId);
      emit(container, 'start');
    },

    async pause(containerId) {
      await enter('pause', containerId);
      const container = existing(containerId);
      if (container.state === 'paused') return;
      if (container.state !== 'running') throw new RuntimeError(`container ${containerId} is not running`, false);
      container.state = 'paused';
      emit(container, 'pause');
    },

    async stop(containerId) {
      await enter('stop', containerId);
      const container = containers.get(containerId);
      if (container?.state === 'running' || container?.state === 'paused') this.kill(containerId, 137);
    },

    async diskUsage(containerId) {
      if (containers.get(containerId)?.state !== 'running') return undefined;
      return diskUsage.get(containerId) ?? { writableBytes: 0, dataBytes: 0 };
    },

    setDiskUsage(containerId, usage) {
      diskUsage.set(containerId, usage);
    },

    async unpause(containerId) {
      await enter('unpause', containerId);
      const container = existing(containerId);
      if (container.state !== 'paused') return;
      container.state = 'running';
      emit(container, 'unpause');
    },

    async remove(containerId) {
      await enter('remove', containerId);
      copies.delete(containerId);
      const container = containers.get(containerId);
      if (!container) return;
      containers.delete(containerId);
      emit(container, 'destroy');
    },

    async removeVolume(name) {
      await enter('removeVolume', name);
      volumes.delete(name);
    },

    async removeNetworks(sandboxId) {
      await enter('removeNetworks', sandboxId);
      // As Docker: a network with a container attached cannot be removed.
      if ([...containers.values()].some((c) => c.sandboxId === sandboxId)) {
        throw new RuntimeError(`a container of sandbox ${sandboxId} is still attached to its network`, false);
      }
      for (const [name, owner] of networks) if (owner === sandboxId) networks.delete(name);
    },

    async close() {
      await enter('close', '');
    },

    async removeNetwork(name) {
      await enter('removeNetwork', name);
      const owner = networks.get(name);
      if (owner !== undefined && [...containers.values()].some((c) => c.sandboxId === owner)) {
        throw new RuntimeError(`a container of sandbox ${owner} is still attached to network ${name}`, false);
      }
      networks.delete(name);
    },

    async listNetworks() {
      await enter('listNetworks', '');
      return [...networks].map(([name, sandboxId]) => ({ name, sandboxId }));
    },

    async listUnusedVolumes() {
      await enter('listUnusedVolumes', '');
      const used = new Set([...containers.values()].map((c) => c.sandboxId));
      return [...volumes]
        .filter((entry): entry is [string, string] => entry[1] !== null && !used.has(entry[1]))
        .map(([name, sandboxId]) => ({ name, sandboxId }));
    },

    async listVolumeCopies() {
      await enter('listVolumeCopies', '');
      return [...copies].map(([containerId, running]) => ({ containerId, running }));
    },

    async list(sandboxId) {
      await enter('list', sandboxId ?? '');
      return [...containers.values()].filter((c) => sandboxId === undefined || c.sandboxId === sandboxId).map((c) => ({ ...c, hostPorts: { ...c.hostPorts } }));
    },

    async inspect(containerId) {
      await enter('inspect', containerId);
      const container = containers.get(containerId);
      return container && { ...container, hostPorts: { ...container.hostPorts } };
    },

    async logs(containerId) {
      await enter('logs', containerId);
      return logs.get(containerId) ?? '';
    },

    async snapshot(request) {
      await enter('snapshot', request.containerId);
      // As the Docker driver: a running container is paused for the snapshot, a paused one stays so.
      const container = existing(request.containerId);
      await request.onProgress?.({ phase: 'measured', bytes: 0 });
      await request.onProgress?.({ phase: 'copied', bytes: 0 });
      const wasRunning = container.state === 'running';
      if (wasRunning) container.state = 'paused';
      await request.onProgress?.({ phase: 'paused' });
      await request.onProgress?.({ phase: 'committed', bytes: 0 });
      if (heldSnapshots) await heldSnapshots;
      if (wasRunning && container.state === 'paused') container.state = 'running';
      const image = `snapshot:${request.snapshotId}`;
      const volume = `snapshot-${request.snapshotId}`;
      images.set(image, request.snapshotId);
      volumes.set(volume, null);
      return { image, volume, sizeBytes: 0 };
    },

    async restoreVolume(snapshot, target) {
      await enter('restoreVolume', target.name);
      if (!volumes.has(snapshot.volume)) throw new RuntimeError(`no such volume ${snapshot.volume}`, true);
      volumes.set(target.name, target.sandboxId);
    },

    async removeSnapshot(snapshot) {
      await enter('removeSnapshot', snapshot.image ?? snapshot.volume ?? '');
      if (snapshot.image) images.delete(snapshot.image);
      if (snapshot.volume) volumes.delete(snapshot.volume);
    },

    async listSnapshots() {
      await enter('listSnapshots', '');
      const found = new Map<string, SnapshotObservation>();
      for (const [image, snapshotId] of images) found.set(snapshotId, { snapshotId, image, volume: null });
      for (const volume of volumes.keys()) {
        const snapshotId = volume.startsWith('snapshot-') ? volume.slice('snapshot-'.length) : undefined;
        if (snapshotId) found.set(snapshotId, { snapshotId, image: found.get(snapshotId)?.image ?? null, volume });
      }
      return [...found.values()];
    },

    watch(onEvent) {
      watchers.add(onEvent);
      return () => watchers.delete(onEvent);
    },

    rebuildImage(image) {
      imageIds.set(image, `sha256:fake-${randomBytes(8).toString('hex')}`);
    },

    containers: () => [...containers.values()].map((c) => ({ ...c })),
    volumes: () => [...volumes.keys()],
    volumeCopies: () => [...copies.keys()],
    networks: () => [...networks].map(([name, sandboxId]) => ({ name, sandboxId })),
    addNetwork(sandboxId) {
      networks.set(`sandbox-server-net-${sandboxId}`, sandboxId);
    },
    addVolume(name, sandboxId) {
      volumes.set(name, sandboxId);
    },
    addVolumeCopy(running) {
      const containerId = randomBytes(32).toString('hex');
      copies.set(containerId, running);
      return containerId;
    },

    kill(containerId, exitCode = 137, oomKilled = false, finishedAt = Date.now()) {
      const container = existing(containerId);
      container.state = 'exited';
      container.exitCode = exitCode;
      container.oomKilled = oomKilled;
      container.finishedAt = finishedAt;
      container.hostPorts = {};
      emit(container, 'die');
    },

    removeBehindBack(containerId) {
      const container = existing(containerId);
      containers.delete(containerId);
      emit(container, 'destroy');
    },

    addContainer(sandboxId, state = 'running') {
      return { ...add(sandboxId, state, [{ name: AGENT_SERVER_PORT_NAME, container_port: AGENT_SERVER_CONTAINER_PORT }]) };
    },

    disconnect() {
      for (const watcher of watchers) queueMicrotask(() => watcher({ sandboxId: '', containerId: '', action: ENGINE_DISCONNECTED }));
    },

    writeLog(containerId, text) {
      logs.set(containerId, (logs.get(containerId) ?? '') + text);
    },

    failNext(verb, error) {
      failures.set(verb, error);
    },

    holdSnapshots() {
      let release!: () => void;
      heldSnapshots = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        heldSnapshots = undefined;
        release();
      };
    },

    holdCreates(afterCreated = false) {
      heldAfterCreated = afterCreated;
      let release!: () => void;
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        held = undefined;
        release();
      };
    },
  };
}
