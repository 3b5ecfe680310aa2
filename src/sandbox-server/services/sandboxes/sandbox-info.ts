import { AGENT_SERVER_PORT_NAME } from '../../../contracts/sandbox.js';
import type { SandboxRow } from '../../db/schema.js';
import type { SandboxInfo } from '../../models/sandbox.js';

/**
 * The wire view of a sandbox row. The session key and URLs are only given while the sandbox is
 * RUNNING: before that nothing answers on them, and after a pause the host ports change. A
 * STARTING sandbox's status_detail says what it waits for (an image pull's progress, the container,
 * the agent-server's first answer), an ERROR or MISSING one's why. While its
 * engine is unreachable (`engineAway`, from engineAwayDetails), status_detail says so: the status
 * is the last one seen, and the desired state stands until the engine answers again.
 */
export function toSandboxInfo(row: SandboxRow, engineAway: string | null = null): SandboxInfo {
  const running = row.status === 'RUNNING';
  return {
    id: row.id,
    created_by_user_id: row.createdByUserId,
    sandbox_spec_id: row.specId,
    status: row.status,
    status_detail: engineAway ?? (row.status === 'ERROR' || row.status === 'MISSING' || row.status === 'STARTING' ? row.statusDetail : null),
    session_api_key: running ? row.sessionApiKey : null,
    exposed_urls: running && row.hostPorts && row.hostAddress ? exposedUrls(row.hostAddress, row.hostPorts) : null,
    created_at: row.createdAt.toISOString(),
    agent_server_version: row.agentServerVersion,
    engine: row.engine,
  };
}

function exposedUrls(host: string, hostPorts: Record<string, number>): NonNullable<SandboxInfo['exposed_urls']> {
  return Object.entries(hostPorts)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, port]) => ({ name, url: `http://${host}:${port}`, port }));
}

/**
 * `info` with the spec's exposed ports other than AGENT_SERVER (VSCODE, WORKER_1, the user's own)
 * given as their preview URLs under `base` (the control plane as its callers reach it), path mode
 * by name: their host ports are published on the engine's host, where a caller may have no way in.
 * AGENT_SERVER keeps its direct URL, which OpenHands clients talk to. `port` stays the host port.
 */
export function withPreviewUrls(info: SandboxInfo, base: string): SandboxInfo {
  if (!info.exposed_urls) return info;
  const root = base.replace(/\/+$/, '');
  const exposed = info.exposed_urls.map((entry) =>
    entry.name === AGENT_SERVER_PORT_NAME ? entry : { ...entry, url: `${root}/api/v1/sandboxes/${encodeURIComponent(info.id)}/ports/${encodeURIComponent(entry.name)}/` },
  );
  return { ...info, exposed_urls: exposed };
}
