import type { SandboxRow, SandboxSpecRow } from '../db/schema.js';
import { DATA_OWNER_ENV } from '../../contracts/agent-server/data-owner.js';
import { SESSION_KEY_DIGEST_ENV, sessionKeyDigest } from '../../contracts/agent-server/session-key-digest.js';
import { dataVolumeNameFor, networkNameFor } from '../runtime/resource-names.js';
import type { ContainerRequest } from '../runtime/runtime.js';
import { specPlaceholder } from '../broker/brokered-secret.js';
import { egressProxyEnv } from '../runtime/allowlist-rules.js';

/** What of a spec its containers are made from. */
export type ContainerSpec = Pick<
  SandboxSpecRow,
  'id' | 'image' | 'command' | 'initialEnv' | 'secretEnv' | 'secretHosts' | 'workingDir' | 'exposedPorts' | 'cpus' | 'memoryMb' | 'pidsLimit' | 'runtime' | 'network'
>;

/**
 * The container a sandbox row asks for: its spec (run from the row's own image when it was started
 * from a snapshot), plus its own data volume and network, and the digest of its own session key in
 * its environment. Only the digest: the key never enters the container, so nothing the agent runs
 * there can find it, and the container can be started again without handing anything over. Its id
 * too, as the owner of the data in its volume: the agent-server of a sandbox started from a snapshot
 * finds the original's id there and starts the conversations it finds running paused, rather than
 * running them twice.
 */
export function containerRequestFor(
  row: Pick<SandboxRow, 'id' | 'sessionApiKey' | 'image'>,
  spec: ContainerSpec,
  dataMountPath: string,
): ContainerRequest {
  const env = {
    ...(spec.network === 'allowlist' ? egressProxyEnv() : {}),
    [SESSION_KEY_DIGEST_ENV]: sessionKeyDigest(row.sessionApiKey),
    [DATA_OWNER_ENV]: row.id,
  };
  return {
    sandboxId: row.id,
    specId: spec.id,
    image: row.image ?? spec.image,
    command: spec.command,
    env,
    // The sandbox's own values win: a spec cannot set its digest or owner, wherever initial_env goes.
    initialEnv: Object.fromEntries(
      Object.entries(spec.initialEnv)
        .filter(([name]) => !(name in env))
        // A brokered secret's value stays here: the container gets its placeholder (broker/).
        .map(([name, value]) => [name, name in spec.secretHosts ? specPlaceholder(row.sessionApiKey, name) : value]),
    ),
    secretEnv: spec.secretEnv.filter((name) => !(name in env)),
    workingDir: spec.workingDir,
    exposedPorts: spec.exposedPorts,
    cpus: spec.cpus,
    memoryMb: spec.memoryMb,
    pidsLimit: spec.pidsLimit,
    runtime: spec.runtime,
    dataVolume: { name: dataVolumeNameFor(row.id), mountPath: dataMountPath },
    network: { name: networkNameFor(row.id), access: spec.network },
  };
}
