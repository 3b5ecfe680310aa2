import { and, eq, ne } from 'drizzle-orm';
import { AGENT_SERVER_CONTAINER_PORT, AGENT_SERVER_PORT_NAME, type OciRuntime } from '../../../contracts/sandbox.js';
import type { Database } from '../../db/client.js';
import { sandboxSpecs } from '../../db/schema.js';

/** The workspace the agent-server's tools start in. */
export const DEFAULT_WORKING_DIR = '/workspace';

/**
 * The resource limits every spec gets unless it names its own (SANDBOX_DEFAULT_MEMORY_MB, _PIDS,
 * _CPUS, _DISK_MB): the default spec at every start, and each spec created without them.
 */
export interface DefaultLimits {
  memoryMb: number;
  pidsLimit: number;
  cpus: number;
  /** The sandbox's writable layer and data volume together, in MB (the disk watchdog's limit). */
  diskMb: number;
}

/**
 * Enough for an agent's builds and test runs, small enough that one runaway sandbox (a leak, a fork
 * bomb, a busy loop, a disk filler) leaves the machine and its neighbours working.
 */
export const DEFAULT_LIMITS: DefaultLimits = { memoryMb: 2048, pidsLimit: 512, cpus: 1, diskMb: 10_240 };

/**
 * Makes the spec that runs `agentServerImage` exist and be the only default; run at every start.
 * Its id is the image, as OpenHands names Docker specs, so changing AGENT_SERVER_IMAGE adds a new
 * default and leaves the old spec (and the sandboxes using it) alone. An existing spec of that id
 * keeps its settings but takes the current limits, runtime and warm pool size (SANDBOX_WARM_POOL),
 * which are the operator's to change.
 */
export async function ensureDefaultSandboxSpec(
  db: Database,
  agentServerImage: string,
  limits: DefaultLimits = DEFAULT_LIMITS,
  runtime: OciRuntime = 'runc',
  warmPoolSize = 0,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .insert(sandboxSpecs)
      .values({
        id: agentServerImage,
        image: agentServerImage,
        command: null,
        initialEnv: {},
        workingDir: DEFAULT_WORKING_DIR,
        exposedPorts: [{ name: AGENT_SERVER_PORT_NAME, container_port: AGENT_SERVER_CONTAINER_PORT }],
        ...limits,
        runtime,
        warmPoolSize,
        isDefault: true,
      })
      .onConflictDoUpdate({ target: sandboxSpecs.id, set: { ...limits, runtime, warmPoolSize, isDefault: true, deletedAt: null } });
    await tx
      .update(sandboxSpecs)
      .set({ isDefault: false })
      .where(and(eq(sandboxSpecs.isDefault, true), ne(sandboxSpecs.id, agentServerImage)));
  });
}
