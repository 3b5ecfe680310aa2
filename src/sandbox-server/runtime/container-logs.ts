import type Docker from 'dockerode';

/** SANDBOX_LOG_MAX_MB and SANDBOX_LOG_MAX_FILES: how much log each container keeps on the engine. */
export interface LogRotation {
  maxMb: number;
  maxFiles: number;
}

/** Kubernetes' kubelet keeps 10 MiB × 5 per container; so do we. */
export const DEFAULT_LOG_ROTATION: LogRotation = { maxMb: 10, maxFiles: 5 };

/**
 * The log settings of every container we create. Named explicitly rather than left to the
 * engine's default driver: json-file without options (Docker's default) keeps everything a
 * container prints, so a sandbox printing in a loop fills the engine's disk. json-file keeps
 * `docker logs` (and the start timeout's log tail) working.
 */
export function logConfigFor(rotation: LogRotation): Docker.HostConfig['LogConfig'] {
  return { Type: 'json-file', Config: { 'max-size': `${rotation.maxMb}m`, 'max-file': String(rotation.maxFiles) } };
}
