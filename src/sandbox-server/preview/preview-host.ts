/**
 * Host mode: `{port}-{sandbox_id}.{PREVIEW_DOMAIN}` names one port of one sandbox, for apps that
 * must live at `/` and for pages that should not share the control plane's origin. Host names
 * are case-insensitive, so only sandboxes whose ids are lower case DNS labels have one (every id
 * the control plane draws is).
 */
export interface PreviewAddress {
  sandboxId: string;
  port: number;
}

/** How host mode's requests are labelled in logs and metrics, whatever their path. */
export const PREVIEW_HOST_ROUTE = '{port}-{sandbox_id}.{PREVIEW_DOMAIN}/*';

const LABEL = /^([0-9]{1,5})-([a-z0-9](?:[a-z0-9-]{0,55}[a-z0-9])?)$/;

/** The sandbox and port a request's `Host` names under `domain`, or null when it names none. */
export function previewAddressOf(host: string | undefined, domain: string | null): PreviewAddress | null {
  if (!host || !domain) return null;
  const hostname = host.toLowerCase().replace(/:\d+$/, '');
  const suffix = `.${domain.toLowerCase()}`;
  if (!hostname.endsWith(suffix)) return null;
  const match = LABEL.exec(hostname.slice(0, -suffix.length));
  if (!match?.[1] || !match[2]) return null;
  const port = Number(match[1]);
  return port >= 1 && port <= 65_535 ? { sandboxId: match[2], port } : null;
}

/** The host name of a sandbox's port under `domain`, or null when the id cannot be part of a host name. */
export function previewHostName(domain: string, sandboxId: string, port: number): string | null {
  const label = `${port}-${sandboxId}`;
  return LABEL.test(label) ? `${label}.${domain.toLowerCase()}` : null;
}
