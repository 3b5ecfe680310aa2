import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { statusCodeOf } from './docker-errors.js';

/**
 * Memory in use this close to the limit counts as "at the limit": 1% of it, and at least 4 MiB, as
 * gVisor stuck at a small limit (64 MiB) stays ~0.7 MiB below it.
 */
const AT_LIMIT_MARGIN_SHARE = 0.01;
const AT_LIMIT_MARGIN_BYTES = 4 * 1024 * 1024;

export interface MemoryWatchdogOptions {
  docker: Docker;
  log: Logger;
  /** How often a watched container's memory is read. */
  sampleMs?: number;
  /** Consecutive readings at the limit after which the container is ended. */
  stuckSamples?: number;
  /** Consecutive readings below the limit after which the watch ends (the kill freed memory). */
  calmSamples?: number;
}

export interface MemoryWatchdog {
  /** Called on the engine's `oom` event: watches the container until it frees memory, stops or is ended. */
  watch(containerId: string): void;
  close(): void;
}

/**
 * Ends a container that the kernel's OOM killer left stuck at its memory limit. Under runc the
 * killer ends the process that allocated and memory falls back; under gVisor it kills one of the
 * sandbox kernel's host processes instead, and the container stays `running` at ~99.9% of its
 * limit, answering nothing, for good. Such a container is killed here, so that it exits with its
 * `oom` event recorded and is reported "out of memory" like a runc one whose main process died.
 */
export function createMemoryWatchdog(options: MemoryWatchdogOptions): MemoryWatchdog {
  const { docker, log } = options;
  const sampleMs = options.sampleMs ?? 1_000;
  const stuckSamples = options.stuckSamples ?? 5;
  const calmSamples = options.calmSamples ?? 3;
  const watched = new Map<string, NodeJS.Timeout>();
  let closed = false;

  function watch(containerId: string): void {
    if (closed) return;
    clearTimeout(watched.get(containerId));
    let atLimit = 0;
    let calm = 0;
    const sample = async () => {
      const memory = await memoryOf(docker, containerId);
      if (closed || !watched.has(containerId)) return;
      if (memory === null) return void watched.delete(containerId);
      if (isAtLimit(memory)) {
        atLimit++;
        calm = 0;
      } else {
        atLimit = 0;
        calm++;
      }
      if (calm >= calmSamples) return void watched.delete(containerId);
      if (atLimit >= stuckSamples) {
        watched.delete(containerId);
        await end(containerId, memory);
        return;
      }
      watched.set(containerId, setTimeout(() => void sample(), sampleMs));
    };
    watched.set(containerId, setTimeout(() => void sample(), sampleMs));
  }

  async function end(containerId: string, memory: MemoryInUse): Promise<void> {
    log.warn({ containerId, ...memory }, 'container stuck at its memory limit after an out-of-memory kill; killing it');
    try {
      await docker.getContainer(containerId).kill({ signal: 'SIGKILL' });
    } catch (error) {
      // 404 or 409 (not running): it ended by itself meanwhile.
      const status = statusCodeOf(error);
      if (status !== 404 && status !== 409) log.warn({ containerId, err: error }, 'could not kill a container stuck at its memory limit');
    }
  }

  return {
    watch,
    close() {
      closed = true;
      for (const timer of watched.values()) clearTimeout(timer);
      watched.clear();
    },
  };
}

/** A running container's memory in use and its limit, in bytes. */
export interface MemoryInUse {
  inUse: number;
  limit: number;
}

export function isAtLimit(memory: MemoryInUse): boolean {
  return memory.limit - memory.inUse <= Math.max(memory.limit * AT_LIMIT_MARGIN_SHARE, AT_LIMIT_MARGIN_BYTES);
}

/** A running container's memory as `docker stats` counts it; null when it no longer runs or the engine cannot say. */
async function memoryOf(docker: Docker, containerId: string): Promise<MemoryInUse | null> {
  try {
    const stats = await docker.getContainer(containerId).stats({ stream: false, 'one-shot': true });
    return memoryInUse(stats.memory_stats);
  } catch {
    return null;
  }
}

/**
 * Memory in use from the engine's memory stats: usage less the inactive file cache the kernel can
 * drop at will (cgroup v1 names it `total_inactive_file`, v2 `inactive_file`), as `docker stats`
 * shows it. null without a usage and a limit (a stopped container).
 */
export function memoryInUse(memory: Partial<Docker.MemoryStats> | undefined): MemoryInUse | null {
  if (!memory?.usage || !memory.limit) return null;
  const stats: Partial<Docker.MemoryStats['stats']> = memory.stats ?? {};
  const reclaimable = stats.total_inactive_file ?? stats.inactive_file ?? 0;
  return { inUse: Math.max(0, memory.usage - reclaimable), limit: memory.limit };
}
