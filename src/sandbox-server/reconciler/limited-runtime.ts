import type { SandboxRuntime } from '../runtime/runtime.js';
import { createLimiter } from './limit.js';

/**
 * Engine calls that change things, in flight at once: enough to overlap I/O, few enough not to
 * swamp a 2-core engine. Creates (the slow ones) have their own slots so that fifty sandboxes
 * starting together do not hold up a pause; listings and inspects are reads and are not limited.
 */
const CREATE_CONCURRENCY = 4;
const CHANGE_CONCURRENCY = 4;

/** The same runtime with creates and other changes queued behind their limits. */
export function limitedRuntime(runtime: SandboxRuntime): SandboxRuntime {
  const limitCreate = createLimiter(CREATE_CONCURRENCY);
  const limit = createLimiter(CHANGE_CONCURRENCY);
  return {
    runtimes: () => runtime.runtimes(),
    probeRuntime: (oci, image) => runtime.probeRuntime(oci, image),
    imageId: (image) => runtime.imageId(image),
    checkImage: (image) => runtime.checkImage(image),
    ensureImage: (image, onProgress) => runtime.ensureImage(image, onProgress),
    create: (request) => limitCreate(() => runtime.create(request)),
    start: (containerId) => limit(() => runtime.start(containerId)),
    pause: (containerId) => limit(() => runtime.pause(containerId)),
    stop: (containerId) => limit(() => runtime.stop(containerId)),
    diskUsage: (containerId, dataMountPath) => runtime.diskUsage(containerId, dataMountPath),
    unpause: (containerId) => limit(() => runtime.unpause(containerId)),
    remove: (containerId) => limit(() => runtime.remove(containerId)),
    removeVolume: (name) => limit(() => runtime.removeVolume(name)),
    removeNetworks: (sandboxId) => limit(() => runtime.removeNetworks(sandboxId)),
    removeNetwork: (name) => limit(() => runtime.removeNetwork(name)),
    listNetworks: () => runtime.listNetworks(),
    listUnusedVolumes: () => runtime.listUnusedVolumes(),
    listVolumeCopies: () => runtime.listVolumeCopies(),
    list: (sandboxId) => runtime.list(sandboxId),
    inspect: (containerId) => runtime.inspect(containerId),
    logs: (containerId, lines) => runtime.logs(containerId, lines),
    takesNewConnections: () => runtime.takesNewConnections(),
    snapshot: (request) => limit(() => runtime.snapshot(request)),
    restoreVolume: (snapshot, target) => limit(() => runtime.restoreVolume(snapshot, target)),
    removeSnapshot: (snapshot) => limit(() => runtime.removeSnapshot(snapshot)),
    listSnapshots: () => runtime.listSnapshots(),
    watch: (onEvent) => runtime.watch(onEvent),
    close: () => runtime.close(),
  };
}
