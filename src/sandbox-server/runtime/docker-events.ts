import type Docker from 'dockerode';
import type { Logger } from '../../logger.js';
import { createMemoryWatchdog } from './docker-memory-watchdog.js';
import { ENGINE_DISCONNECTED, LABEL_SANDBOX_ID, type RuntimeEvent, type SandboxRuntime } from './runtime.js';

const WATCH_RECONNECT_MS = 1_000;

export interface DockerEventsOptions {
  docker: Docker;
  /** The label filter naming our sandboxes' containers: only their events are followed. */
  sandboxContainers: string[];
  log: Logger;
}

/** The engine's container events, and what the runtime remembers of them. */
export interface DockerEvents {
  watch: SandboxRuntime['watch'];
  /** Whether the engine reported an `oom` event for the container (until it is destroyed). */
  oomEvented(containerId: string): boolean;
  close(): void;
}

/**
 * Follows our containers' events, reconnecting when the stream ends. It remembers the containers
 * the engine reported an `oom` event for, until they are destroyed: dockerd 20.10 sets OOMKilled
 * only when the event comes before the container's exit; under load (and under gVisor often) it
 * comes after, and the flag stays false for good although the kernel killed it. Such a container
 * is watched by the memory watchdog (docker-memory-watchdog.ts).
 */
export function createDockerEvents(options: DockerEventsOptions): DockerEvents {
  const { docker, log } = options;
  const memoryWatchdog = createMemoryWatchdog({ docker, log });
  const oomEvented = new Set<string>();

  const noted = (event: RuntimeEvent) => {
    if (event.action === 'oom') {
      oomEvented.add(event.containerId);
      memoryWatchdog.watch(event.containerId);
    }
    if (event.action === 'destroy') oomEvented.delete(event.containerId);
  };

  return {
    watch: (onEvent) =>
      followEvents(options, (event) => {
        noted(event);
        onEvent(event);
      }),
    oomEvented: (containerId) => oomEvented.has(containerId),
    close: () => memoryWatchdog.close(),
  };
}

/** Streams the events to `onEvent` until the returned function is called; ENGINE_DISCONNECTED once per stream lost. */
function followEvents({ docker, sandboxContainers, log }: DockerEventsOptions, onEvent: (event: RuntimeEvent) => void): () => void {
  let stopped = false;
  let stream: NodeJS.ReadableStream | undefined;
  let retry: NodeJS.Timeout | undefined;

  const reconnect = () => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, WATCH_RECONNECT_MS);
  };

  const connect = async () => {
    try {
      const events = await docker.getEvents({
        filters: { type: ['container'], label: sandboxContainers },
      });
      if (stopped) return destroyStream(events);
      stream = events;
      // Reported once per stream that was up: the engine (or our way to it) went away.
      const lost = () => {
        if (stream !== events) return;
        stream = undefined;
        if (!stopped) onEvent({ sandboxId: '', containerId: '', action: ENGINE_DISCONNECTED });
        reconnect();
      };
      let buffered = '';
      events.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const event = parseEvent(line);
          if (event) onEvent(event);
        }
      });
      events.on('error', lost);
      events.on('close', lost);
      events.on('end', lost);
    } catch (error) {
      log.warn({ err: error }, 'docker event stream unavailable; retrying');
      reconnect();
    }
  };

  void connect();
  return () => {
    stopped = true;
    clearTimeout(retry);
    if (stream) destroyStream(stream);
  };
}

function parseEvent(line: string): RuntimeEvent | undefined {
  if (!line.trim()) return undefined;
  try {
    const event = JSON.parse(line) as { Action?: string; status?: string; id?: string; Actor?: { ID?: string; Attributes?: Record<string, string> } };
    return {
      sandboxId: event.Actor?.Attributes?.[LABEL_SANDBOX_ID] ?? '',
      containerId: event.Actor?.ID ?? event.id ?? '',
      action: event.Action ?? event.status ?? '',
    };
  } catch {
    return undefined;
  }
}

function destroyStream(stream: NodeJS.ReadableStream): void {
  (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
}
