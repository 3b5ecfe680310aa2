/**
 * The sandbox's lifecycle words, shared by the database columns, the API models, the reconciler
 * and the client. Each is a tuple so that zod enums, drizzle column enums and TypeScript unions
 * come from one list.
 */

/** What an owner asked for; written by API handlers only. */
export const DESIRED_STATES = ['RUNNING', 'PAUSED', 'DELETED'] as const;
export type DesiredState = (typeof DESIRED_STATES)[number];

/** What the reconciler observed; OpenHands' SandboxStatus. */
export const SANDBOX_STATUSES = ['STARTING', 'RUNNING', 'PAUSED', 'ERROR', 'MISSING'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

/**
 * The OCI runtimes a spec may name (our extension): `runsc` runs the sandbox under gVisor, a kernel
 * in user space between the agent's code and the host's; `runc` is Docker's plain container.
 */
export const OCI_RUNTIMES = ['runc', 'runsc'] as const;
export type OciRuntime = (typeof OCI_RUNTIMES)[number];
/** What SANDBOX_RUNTIME and the shared settings may ask for: a runtime, or `auto` (gVisor when it works, else runc). */
export const RUNTIME_SETTINGS = ['auto', ...OCI_RUNTIMES] as const;
export type RuntimeSetting = (typeof RUNTIME_SETTINGS)[number];

/**
 * What a sandbox's own network lets it reach (our extension): `internet` reaches addresses beyond
 * this machine; `none` reaches nothing outside itself; `allowlist` reaches what its egress policy
 * allows, names through the control plane's egress proxy. None reaches another sandbox, nor the host
 * but for the ports an `allowlist` policy opens.
 */
export const SANDBOX_NETWORKS = ['internet', 'none', 'allowlist'] as const;
export type SandboxNetwork = (typeof SANDBOX_NETWORKS)[number];

/** The exposed port clients and health checks use to reach a sandbox's agent-server. */
export const AGENT_SERVER_PORT_NAME = 'AGENT_SERVER';
/** Where our agent-server image listens inside its container. */
export const AGENT_SERVER_CONTAINER_PORT = 8000;
