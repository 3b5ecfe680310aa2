/**
 * How the control plane tells a sandbox's agent-server whose data it serves: the sandbox's id, in
 * this environment variable of its container. The agent-server records it in its data directory;
 * finding another id recorded there means the data is a copy (a fork, or a sandbox started from a
 * snapshot), whose conversations that were running start paused instead of carrying on.
 */
export const DATA_OWNER_ENV = 'AGENT_SERVER_DATA_OWNER';
