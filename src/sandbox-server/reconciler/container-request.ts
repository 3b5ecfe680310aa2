import type { SandboxRow, SandboxSpecRow } from '../db/schema.js';
import type { ContainerRequest } from '../runtime/runtime.js';

export function dataVolumeNameFor(sandboxId: string): string {
  return `sandbox-server-data-${sandboxId}`;
}

/** The container a sandbox row asks for: its spec, plus its own session key and data volume. */
export function containerRequestFor(row: SandboxRow, spec: SandboxSpecRow, dataMountPath: string): ContainerRequest {
  return {
    sandboxId: row.id,
    specId: spec.id,
    image: spec.image,
    command: spec.command,
    env: { ...spec.initialEnv, OH_SESSION_API_KEYS_0: row.sessionApiKey },
    workingDir: spec.workingDir,
    exposedPorts: spec.exposedPorts,
    cpus: spec.cpus,
    memoryMb: spec.memoryMb,
    pidsLimit: spec.pidsLimit,
    runtime: spec.runtime,
    dataVolume: { name: dataVolumeNameFor(row.id), mountPath: dataMountPath },
  };
}
