export { type AgentRequest, type AgentServerProxy, createSandboxServerClient, type SandboxServerClient, type SandboxServerClientOptions } from './client.js';
export { describeDetail, EventStreamClosedError, SandboxServerError, SandboxServerUnreachableError } from './errors.js';
export type { FollowEventsOptions } from './event-stream.js';
export type { FollowLifecycleEventsOptions } from './lifecycle-stream.js';
export { EVENT_SOCKET_PATH, type HttpMethod, type Operation, type OperationName, SANDBOX_SERVER_OPERATIONS } from './operations.js';
export { iteratePages } from './pages.js';
export type * from './types.js';
