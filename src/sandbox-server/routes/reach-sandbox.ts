import type { AgentServerTarget } from '../agent-client.js';
import { ConflictError, UpstreamError } from '../../errors/index.js';
import { engineAway } from '../proxy/engine-away.js';
import { resolveTarget } from '../services/sandboxes/resolve-target.js';
import type { AppConversationRouteDeps } from './app-conversations/deps.js';

/** How long a request waits for its sandbox to come up (a paused one resumed, a starting one). */
const ACCESS_TIMEOUT_MS = 120_000;

type ReachDeps = Pick<AppConversationRouteDeps, 'ctx' | 'targets' | 'engineAvailable' | 'recordActivity'>;

/**
 * The agent-server of a sandbox a request goes through to (the agent proxy, preview URLs,
 * port-forward), resuming it when its spec allows; the request counts as activity. An engine
 * shutting down stops its containers first: the failed state seen meanwhile is the engine's
 * doing, a 503 to retry, and the reconciler restores the sandbox when the engine returns.
 */
export async function reachSandbox(deps: ReachDeps, sandboxId: string): Promise<AgentServerTarget> {
  const target = await resolveTarget(deps.ctx, deps.targets, sandboxId, { resume: 'if-spec-allows', timeoutMs: ACCESS_TIMEOUT_MS }).catch(async (error: unknown) => {
    if (error instanceof ConflictError && !(await deps.engineAvailable(sandboxId))) throw engineAway(sandboxId);
    throw error;
  });
  deps.recordActivity(sandboxId);
  return target;
}

/**
 * Runs `send` to the sandbox's agent-server. Unreachable, the container may have gone or moved:
 * the next request looks it up again, and with its engine away the answer is a 503.
 */
export async function sendToSandbox(deps: ReachDeps, sandboxId: string, send: () => Promise<Response>): Promise<Response> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    deps.targets.forget(sandboxId);
    if (!(await deps.engineAvailable(sandboxId))) throw engineAway(sandboxId);
    throw error;
  }
}
