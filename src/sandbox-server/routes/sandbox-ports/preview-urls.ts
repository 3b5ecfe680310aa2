import { previewHostName } from '../../preview/preview-host.js';

/** Where a sandbox port's preview lives in path mode, under `origin` (this server as the caller reached it). */
export function previewPathUrl(origin: string, sandboxId: string, port: number | string): string {
  return `${origin}/api/v1/sandboxes/${encodeURIComponent(sandboxId)}/ports/${port}/`;
}

/** The same in host mode, on `origin`'s scheme and port; null without a domain or for an id no host name can hold. */
export function previewHostUrl(origin: string, domain: string | null, sandboxId: string, port: number): string | null {
  if (!domain) return null;
  const host = previewHostName(domain, sandboxId, port);
  if (!host) return null;
  const base = new URL(origin);
  return `${base.protocol}//${host}${base.port ? `:${base.port}` : ''}/`;
}
