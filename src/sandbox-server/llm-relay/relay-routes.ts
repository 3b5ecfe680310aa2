import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import { llmRelayRoutes, sandboxes } from '../db/schema.js';
import type { TokenCounts } from './token-usage.js';
import { ExpiringMap } from '../../expiring-map.js';

/** One conversation's way to its provider, as the relay needs it at each call. */
export interface RelayRoute {
  conversationId: string;
  sandboxId: string;
  upstream: string;
  publicDefault: boolean;
  /** The conversation's own key; null: the server's LLM_API_KEY. */
  apiKey: string | null;
}

export interface RelayRoutesOptions {
  /** How long a token's route (or its absence) is trusted without asking the database again. */
  ttlMs?: number;
  log: Logger;
}

/**
 * The routes of live sandboxes, by the token their agents present. A call asks the database at most
 * once per `ttlMs` per token, so the relay adds no query to most calls; a deleted sandbox's token
 * stops working within `ttlMs` (its rows are removed with it, or it is marked DELETED first).
 */
export class RelayRoutes {
  readonly #db: Database;
  readonly #log: Logger;
  readonly #cache: ExpiringMap<string, RelayRoute | null>;

  constructor(db: Database, options: RelayRoutesOptions) {
    this.#db = db;
    this.#cache = new ExpiringMap(options.ttlMs ?? 2_000);
    this.#log = options.log;
  }

  async find(token: string): Promise<RelayRoute | null> {
    const cached = this.#cache.get(token);
    if (cached !== undefined) return cached;
    const [row] = await this.#db
      .select({
        conversationId: llmRelayRoutes.conversationId,
        sandboxId: llmRelayRoutes.sandboxId,
        upstream: llmRelayRoutes.upstream,
        publicDefault: llmRelayRoutes.publicDefault,
        apiKey: llmRelayRoutes.apiKey,
      })
      .from(llmRelayRoutes)
      .innerJoin(sandboxes, eq(sandboxes.id, llmRelayRoutes.sandboxId))
      .where(and(eq(llmRelayRoutes.token, token), isNull(sandboxes.deletedAt), ne(sandboxes.desiredState, 'DELETED')));
    const route = row ?? null;
    this.#cache.set(token, route);
    return route;
  }

  /** Adds one answered call to its conversation's counts; a failed write is logged, never the caller's failure. */
  recordUsage(conversationId: string, tokens: TokenCounts): void {
    this.#db
      .update(llmRelayRoutes)
      .set({
        calls: sql`${llmRelayRoutes.calls} + 1`,
        inputTokens: sql`${llmRelayRoutes.inputTokens} + ${tokens.input}`,
        outputTokens: sql`${llmRelayRoutes.outputTokens} + ${tokens.output}`,
      })
      .where(eq(llmRelayRoutes.conversationId, conversationId))
      .then(
        () => undefined,
        (error: unknown) => this.#log.warn({ err: error, conversationId }, 'recording LLM usage failed'),
      );
  }
}
