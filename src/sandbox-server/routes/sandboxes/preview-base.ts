import type { Context } from 'hono';
import type { ServiceContext } from '../../services/context.js';

/** Where the caller reaches the control plane: PUBLIC_URL, else the scheme and Host its request came with. */
export function previewBaseOf(c: Context, ctx: ServiceContext): string {
  return ctx.publicUrl ?? new URL(c.req.url).origin;
}
