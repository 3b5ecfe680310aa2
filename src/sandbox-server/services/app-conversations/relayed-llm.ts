import { randomBytes } from 'node:crypto';
import { defaultBaseUrlOf } from '../../../contracts/llm-providers.js';
import type { Database } from '../../db/client.js';
import { llmRelayRoutes } from '../../db/schema.js';
import { agentBaseUrl } from '../../llm-relay/relay-request.js';
import type { AppConversationSettings } from './context.js';

/** Where and with what the agent of a conversation calls its LLM: the relay, with a token that is no key. */
export interface RelayedLlm {
  base_url: string | null;
  api_key: string | null;
}

/**
 * Makes (or, for a task's repeated step, keeps) the relay route of a conversation, and returns the
 * LLM settings its agent gets: the relay's address with the provider's path, and the route's token
 * in place of a key. The real key stays here: the server's LLM_API_KEY is read by the relay at each
 * call, a conversation's own key is kept on its route. A model whose provider has no address
 * without LLM_BASE_URL (azure, a proxy) gets no base_url, and its first call fails at once saying so.
 */
export async function relayedLlm(
  db: Database,
  settings: AppConversationSettings,
  input: { conversationId: string; sandboxId: string; model: string; ownApiKey: string | null },
): Promise<RelayedLlm> {
  const upstream = settings.llm.baseUrl ?? defaultBaseUrlOf(input.model);
  if (upstream === null) return { base_url: null, api_key: null };
  const values = { upstream, publicDefault: settings.llm.baseUrl === null, apiKey: input.ownApiKey };
  const [route] = await db
    .insert(llmRelayRoutes)
    .values({ conversationId: input.conversationId, sandboxId: input.sandboxId, token: `sk-relay-${randomBytes(24).toString('base64url')}`, ...values })
    .onConflictDoUpdate({ target: llmRelayRoutes.conversationId, set: values })
    .returning({ token: llmRelayRoutes.token });
  if (!route) throw new Error(`the relay route of conversation ${input.conversationId} was not written`);
  return { base_url: agentBaseUrl(settings.llmRelay.origin, upstream), api_key: route.token };
}
