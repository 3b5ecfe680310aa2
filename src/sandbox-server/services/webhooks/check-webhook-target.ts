import { ForbiddenError, validationError } from '../../../errors/index.js';
import type { WebhookContext } from './context.js';

/**
 * Refuses a target that is not public unless WEBHOOK_ALLOWED_HOSTS names it (422), and then unless
 * an admin key asks (403). The dispatcher judges again at every attempt, since names resolve anew.
 */
export async function checkWebhookTarget(ctx: WebhookContext, url: string, admin: boolean): Promise<void> {
  const verdict = await ctx.webhookTargets.judge(new URL(url));
  if (!verdict.allowed) throw validationError('body', ['url'], verdict.reason);
  if (verdict.private && !admin) throw new ForbiddenError('A webhook to a non-public address needs an admin key (SANDBOX_SERVER_ADMIN_KEYS)');
}
