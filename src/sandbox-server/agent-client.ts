import { BadGatewayError } from '../http/errors.js';
import type { AgentServerTarget } from './proxy/forward-http.js';

/** What the control plane reads of an agent-server's ConversationInfo. */
export interface AgentConversation {
  id: string;
  execution_status?: string;
  [field: string]: unknown;
}

export interface AgentClient {
  /** POST /api/conversations; the same conversation_id twice is answered with the existing one. */
  createConversation(request: Record<string, unknown>): Promise<AgentConversation>;
  /** GET /api/conversations?ids=...: null for each unknown id. */
  getConversations(ids: string[]): Promise<(AgentConversation | null)[]>;
  /** DELETE /api/conversations/{id}; an unknown conversation is success. */
  deleteConversation(id: string): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The control plane's client of one sandbox's agent-server. Failures are BadGatewayErrors that
 * name what failed but never carry the session key.
 */
export function createAgentClient(target: AgentServerTarget, options: { timeoutMs?: number } = {}): AgentClient {
  const base = target.baseUrl.replace(/\/$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function call(method: string, path: string, body?: unknown, options: { allowNotFound?: boolean } = {}): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          'x-session-api-key': target.sessionApiKey,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
      throw new BadGatewayError(`Agent server unreachable (${method} ${path}): ${cause}`);
    }
    const text = await response.text();
    if (response.status === 404 && options.allowNotFound) return null;
    if (!response.ok) {
      throw new BadGatewayError(`Agent server answered ${response.status} to ${method} ${path}: ${text.slice(0, 500)}`);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new BadGatewayError(`Agent server sent a body that is not JSON for ${method} ${path}`);
    }
  }

  return {
    async createConversation(request) {
      return (await call('POST', '/api/conversations', request)) as AgentConversation;
    },
    async getConversations(ids) {
      if (ids.length === 0) return [];
      const query = ids.map((id) => `ids=${encodeURIComponent(id)}`).join('&');
      return (await call('GET', `/api/conversations?${query}`)) as (AgentConversation | null)[];
    },
    async deleteConversation(id) {
      await call('DELETE', `/api/conversations/${encodeURIComponent(id)}`, undefined, { allowNotFound: true });
    },
  };
}
