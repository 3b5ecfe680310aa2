import { createHash } from 'node:crypto';
import type { SandboxSpecRow } from '../db/schema.js';

/**
 * What a warm-pool member was made from, as one short string: every spec field that shapes its
 * container, the spec's creation (a deleted spec re-created under its id is a new spec) and the
 * agent-server version of the image as the engine has it now. A member whose fingerprint is not its
 * spec's current one is never handed out and is replaced.
 */
export function warmPoolFingerprint(spec: SandboxSpecRow, imageVersion: string | null): string {
  const shape = [
    spec.image,
    imageVersion,
    spec.command,
    spec.initialEnv,
    spec.workingDir,
    spec.exposedPorts,
    spec.cpus,
    spec.memoryMb,
    spec.pidsLimit,
    spec.diskMb,
    spec.runtime,
    spec.network,
    spec.createdAt.toISOString(),
  ];
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}
