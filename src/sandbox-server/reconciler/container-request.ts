import type { SandboxRow, SandboxSpecRow } from '../db/schema.js';
import type { ContainerRequest, SecretFile } from '../runtime/runtime.js';

export function dataVolumeNameFor(sandboxId: string): string {
  return `sandbox-server-data-${sandboxId}`;
}

export function networkNameFor(sandboxId: string): string {
  return `sandbox-server-net-${sandboxId}`;
}

/**
 * Where the agent-server image reads its session key at start (then deletes it). A file rather than
 * an environment variable: the agent's commands run as another user and can read neither it nor
 * the agent-server's memory, while every process of a user can read that user's /proc/N/environ.
 */
export const SESSION_KEY_PATH = '/run/sandbox-server/session-key';

export function secretFilesFor(row: SandboxRow): SecretFile[] {
  return [{ path: SESSION_KEY_PATH, content: row.sessionApiKey }];
}

/**
 * The container a sandbox row asks for: its spec (run from the row's own image when it was started
 * from a snapshot), plus its own session key, data volume and network.
 */
export function containerRequestFor(row: SandboxRow, spec: SandboxSpecRow, dataMountPath: string): ContainerRequest {
  return {
    sandboxId: row.id,
    specId: spec.id,
    image: row.image ?? spec.image,
    command: spec.command,
    env: spec.initialEnv,
    workingDir: spec.workingDir,
    exposedPorts: spec.exposedPorts,
    cpus: spec.cpus,
    memoryMb: spec.memoryMb,
    pidsLimit: spec.pidsLimit,
    runtime: spec.runtime,
    secretFiles: secretFilesFor(row),
    dataVolume: { name: dataVolumeNameFor(row.id), mountPath: dataMountPath },
    network: { name: networkNameFor(row.id), access: spec.network },
  };
}
