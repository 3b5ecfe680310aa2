import type { OpenAPIHono } from '@hono/zod-openapi';
import type { NodeWebSocket } from '@hono/node-ws';
import type { AppConversationContext } from '../../services/app-conversations/context.js';
import type { StartTaskRunner } from '../../services/app-conversations/start-task-runner.js';
import type { TargetCache } from '../../proxy/target-cache.js';

/** What the app-conversation and proxy routes need besides the app. */
export interface AppConversationRouteDeps {
  ctx: AppConversationContext;
  runner: StartTaskRunner;
  upgradeWebSocket: NodeWebSocket['upgradeWebSocket'];
  /** Marks a sandbox as used, for idle auto-pause; the write happens in the background. */
  recordActivity(sandboxId: string): void;
  /** Agent-server targets the proxy resolved, kept in memory. */
  targets: TargetCache;
  /** Whether the sandbox's engine answers (its reconciler's view): an unreachable sandbox is then a 503, not a 502. */
  engineAvailable(sandboxId: string): Promise<boolean>;
}

export type AppConversationRouteRegistrar = (app: OpenAPIHono, deps: AppConversationRouteDeps) => void;
