import type { ApiKeyVerdict } from '../../auth.js';
import type { AppConversationRouteDeps } from '../app-conversations/deps.js';

/** What the preview and port-forward routes need besides the app. */
export interface SandboxPortRouteDeps extends Omit<AppConversationRouteDeps, 'runner'> {
  /** Judges an `Authorization` header against the API keys (accepted for every caller when keyless). */
  checkApiKey(authorization: string | undefined): ApiKeyVerdict;
  /** Host mode's domain (PREVIEW_DOMAIN), or null: path mode only. */
  previewDomain: string | null;
}
