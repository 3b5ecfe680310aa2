import type { AgentServerTarget } from '../../agent-client.js';
import type { ServiceContext } from '../context.js';
import { waitForAgentServer, type WaitForAgentServerOptions } from './wait-for-agent-server.js';

/**
 * What resolveTarget needs of a memory of targets (the proxy's TargetCache): `mark` before a read,
 * `remember` after it with that mark, so a change in between keeps the old target out.
 */
export interface KnownTargets {
  get(sandboxId: string): AgentServerTarget | undefined;
  mark(): number;
  remember(sandboxId: string, target: AgentServerTarget, seen: number): void;
}

/** The sandbox's agent-server from memory, or, the first time, as waitForAgentServer finds it. */
export async function resolveTarget(
  ctx: ServiceContext,
  targets: KnownTargets,
  sandboxId: string,
  options: WaitForAgentServerOptions,
): Promise<AgentServerTarget> {
  const cached = targets.get(sandboxId);
  if (cached) return cached;
  const seen = targets.mark();
  const target = await waitForAgentServer(ctx, sandboxId, options);
  targets.remember(sandboxId, target, seen);
  return target;
}
