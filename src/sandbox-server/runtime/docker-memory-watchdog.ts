import type Docker from 'dockerode';
import type { Logger } from 'pino';
import { statusCodeOf } from './docker-errors.js';

/** Memory in use at or above this share of the limit counts as "at the limit". */
const AT_LIMIT_SHARE = 0.99;

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
      const share = await memoryShareOf(docker, containerId);
      if (closed || !watched.has(containerId)) return;
      if (share === null) return void watched.delete(containerId);
      if (share >= AT_LIMIT_SHARE) {
        atLimit++;
        calm = 0;
      } else {
        atLimit = 0;
        calm++;
      }
      if (calm >= calmSamples) return void watched.delete(containerId);
      if (atLimit >= stuckSamples) {
        watched.delete(containerId);
        await end(containerId, share);
        return;
      }
      watched.set(containerId, setTimeout(() => void sample(), sampleMs));
    };
    watched.set(containerId, setTimeout(() => void sample(), sampleMs));
  }

  async function end(containerId: string, share: number): Promise<void> {
    log.warn({ containerId, memoryShare: Number(share.toFixed(4)) }, 'container stuck at its memory limit after an out-of-memory kill; killing it');
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

/** The share of its limit a running container's memory takes, as `docker stats` counts it; null when it no longer runs or the engine cannot say. */
async function memoryShareOf(docker: Docker, containerId: string): Promise<number | null> {
  try {
    const stats = await docker.getContainer(containerId).stats({ stream: false, 'one-shot': true });
    return memoryShare(stats.memory_stats);
  } catch {
    return null;
  }
}

/**
 * Memory in use over the limit, from the engine's memory stats: usage less the inactive file cache
 * the kernel can drop at will (cgroup v1 names it `total_inactive_file`, v2 `inactive_file`), as
 * `docker stats` shows it. null without a usage and a limit (a stopped container).
 */
export function memoryShare(memory: Partial<Docker.MemoryStats> | undefined): number | null {
  if (!memory?.usage || !memory.limit) return null;
  const stats: Partial<Docker.MemoryStats['stats']> = memory.stats ?? {};
  const reclaimable = stats.total_inactive_file ?? stats.inactive_file ?? 0;
  return Math.max(0, memory.usage - reclaimable) / memory.limit;
}
