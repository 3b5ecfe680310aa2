import { and, asc, eq, gte, inArray, isNull, lt, lte, notExists, or, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { sendParts } from '../../http/send.js';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import { type WebhookDeliveryRow, type WebhookRow, webhookDeliveries, webhooks } from '../db/schema.js';
import type { EventFeed } from '../lifecycle-events/event-feed.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelayMs } from './retry-policy.js';
import { deliveryHeaders, messageId } from './signature.js';
import { pickWithinSlots } from './slots.js';
import { createWebhookTargets, pinnedLookup, type WebhookTargets } from './targets.js';

export interface WebhookDispatcherOptions {
  db: Database;
  /** Wakes the dispatcher when events (and so deliveries) commit, in any replica. */
  feed: EventFeed;
  log: Logger;
  /** A receiver that has not answered after this long has failed the attempt. Default 10 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Where deliveries may go (judged again at every attempt); default: public addresses only. */
  targets?: WebhookTargets;
  /**
   * Attempts in flight at once per webhook, across replicas. Default 4. Each webhook has slots of
   * its own: receivers that never answer hold up only their own webhooks.
   */
  concurrencyPerWebhook?: number;
}

type Outcome = { ok: true; statusCode: number; latencyMs: number } | { ok: false; statusCode: number | null; latencyMs: number; error: string };

/** A lease outlives the attempt's timeout by this much before another dispatcher may take it. */
const LEASE_MARGIN_MS = 5_000;
/** Without anything due, look again after this long anyway (a lost notification costs no more). */
const IDLE_LOOK_MS = 60_000;
/** Deliveries claimed by one pass at most; the next pass takes more. */
const CLAIM_BATCH = 200;

/**
 * Sends the webhook outbox: at least once, in order per (webhook, sandbox), retrying with
 * exponential back-off from the durable next_attempt_at, so restarts lose nothing. Each attempt
 * runs on its own, so a slow receiver holds up only its own sandbox's later deliveries. Claims
 * take a lease (row lock, SKIP LOCKED), so replicas sharing PostgreSQL do not send the same
 * delivery at once; one that crashes mid-attempt leaves a lease that expires.
 */
export class WebhookDispatcher {
  readonly #db: Database;
  readonly #feed: EventFeed;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  readonly #policy: RetryPolicy;
  readonly #perWebhook: number;
  readonly #targets: WebhookTargets;
  readonly #inFlight = new Map<number, Promise<void>>();
  readonly #stopping = new AbortController();
  #wake: () => void = () => {};
  #loop: Promise<void> | undefined;

  constructor(options: WebhookDispatcherOptions) {
    this.#db = options.db;
    this.#feed = options.feed;
    this.#log = options.log.child({ component: 'webhooks' });
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#perWebhook = options.concurrencyPerWebhook ?? 4;
    this.#targets = options.targets ?? createWebhookTargets({ allowedHosts: [] });
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops claiming, and waits for the attempts under way (each bounded by its timeout). */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#wake();
    await this.#loop;
    await Promise.allSettled(this.#inFlight.values());
  }

  async #run(): Promise<void> {
    while (!this.#stopping.signal.aborted) {
      const woken = new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      // Taken before the claim reads: an event committed while it reads still wakes this loop.
      const changed = this.#feed.nextChange();
      let waitMs = IDLE_LOOK_MS;
      try {
        const claimed = await this.#claim();
        for (const { delivery, webhook } of claimed) this.#launch(delivery, webhook);
        waitMs = await this.#msUntilNextDue();
      } catch (err) {
        this.#log.warn({ err }, 'webhook dispatch pass failed');
        waitMs = 1_000;
      }
      let timer: NodeJS.Timeout | undefined;
      const due = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      });
      await Promise.race([woken, due, changed]);
      clearTimeout(timer);
    }
  }

  #launch(delivery: WebhookDeliveryRow, webhook: WebhookRow): void {
    const attempt = this.#attempt(delivery, webhook)
      .catch((err: unknown) => this.#log.warn({ err, webhookId: webhook.id, deliveryId: delivery.id }, 'webhook delivery bookkeeping failed'))
      .finally(() => {
        this.#inFlight.delete(delivery.id);
        // The sandbox's next delivery may now go, and a slot is free.
        this.#wake();
      });
    this.#inFlight.set(delivery.id, attempt);
  }

  /**
   * Due deliveries whose every earlier delivery of the same (webhook, ordering key) is done, each
   * webhook's oldest first, as many per webhook as its free slots (leases not yet expired, whoever
   * holds them, take slots), round-robin across webhooks.
   */
  async #claim(): Promise<{ delivery: WebhookDeliveryRow; webhook: WebhookRow }[]> {
    const now = new Date();
    const earlier = alias(webhookDeliveries, 'earlier');
    const deliveries = await this.#db.transaction(async (tx) => {
      const ranked = tx
        .select({
          id: webhookDeliveries.id,
          webhookId: webhookDeliveries.webhookId,
          rank: sql<number>`row_number() over (partition by ${webhookDeliveries.webhookId} order by ${webhookDeliveries.id})`.as('rank'),
        })
        .from(webhookDeliveries)
        .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
        .where(
          and(
            eq(webhookDeliveries.state, 'pending'),
            eq(webhooks.enabled, true),
            lte(webhookDeliveries.nextAttemptAt, now),
            or(isNull(webhookDeliveries.leasedUntil), lt(webhookDeliveries.leasedUntil, now)),
            notExists(
              tx
                .select({ one: sql`1` })
                .from(earlier)
                .where(
                  and(
                    eq(earlier.webhookId, webhookDeliveries.webhookId),
                    eq(earlier.orderingKey, webhookDeliveries.orderingKey),
                    eq(earlier.state, 'pending'),
                    lt(earlier.id, webhookDeliveries.id),
                  ),
                ),
            ),
          ),
        )
        .as('ranked');
      const candidates = await tx
        .select({ id: ranked.id, webhookId: ranked.webhookId })
        .from(ranked)
        .where(lte(ranked.rank, this.#perWebhook))
        .orderBy(asc(ranked.rank), asc(ranked.id))
        .limit(CLAIM_BATCH);
      if (candidates.length === 0) return [];
      const busy = await tx
        .select({ webhookId: webhookDeliveries.webhookId, leased: sql<number>`count(*)::int` })
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.state, 'pending'),
            gte(webhookDeliveries.leasedUntil, now),
            inArray(webhookDeliveries.webhookId, [...new Set(candidates.map((row) => row.webhookId))]),
          ),
        )
        .groupBy(webhookDeliveries.webhookId);
      const picked = pickWithinSlots(candidates, new Map(busy.map((row) => [row.webhookId, Number(row.leased)])), this.#perWebhook);
      if (picked.length === 0) return [];
      const locked = await tx
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(inArray(webhookDeliveries.id, picked), or(isNull(webhookDeliveries.leasedUntil), lt(webhookDeliveries.leasedUntil, now))))
        .for('update', { skipLocked: true });
      if (locked.length === 0) return [];
      return tx
        .update(webhookDeliveries)
        .set({ leasedUntil: new Date(now.getTime() + this.#timeoutMs + LEASE_MARGIN_MS) })
        .where(inArray(webhookDeliveries.id, locked.map((row) => row.id)))
        .returning();
    });
    if (deliveries.length === 0) return [];
    const owners = await this.#db.select().from(webhooks).where(inArray(webhooks.id, [...new Set(deliveries.map((d) => d.webhookId))]));
    const byId = new Map(owners.map((webhook) => [webhook.id, webhook]));
    return deliveries.flatMap((delivery) => {
      const webhook = byId.get(delivery.webhookId);
      return webhook ? [{ delivery, webhook }] : [];
    });
  }

  /** How long until the next pending delivery is due (or its lease ends), at most IDLE_LOOK_MS. */
  async #msUntilNextDue(): Promise<number> {
    const [row] = await this.#db
      .select({
        at: sql<string | Date | null>`min(greatest(${webhookDeliveries.nextAttemptAt}, coalesce(${webhookDeliveries.leasedUntil}, ${webhookDeliveries.nextAttemptAt})))`,
      })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(and(eq(webhookDeliveries.state, 'pending'), eq(webhooks.enabled, true)));
    if (!row?.at) return IDLE_LOOK_MS;
    const at = new Date(row.at).getTime();
    return Math.min(IDLE_LOOK_MS, Math.max(0, at - Date.now()));
  }

  async #attempt(delivery: WebhookDeliveryRow, webhook: WebhookRow): Promise<void> {
    const outcome = await this.#post(delivery, webhook);
    await this.#record(delivery, webhook, outcome);
  }

  async #post(delivery: WebhookDeliveryRow, webhook: WebhookRow): Promise<Outcome> {
    const url = new URL(webhook.url);
    // Judged before anything is sent, and the same words whatever the address and port: the log of
    // a refused target tells nothing about what listens there.
    const target = await this.#targets.judge(url);
    if (!target.allowed) return { ok: false, statusCode: null, latencyMs: 0, error: `refused: ${target.reason}` };
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      // node:http under sendParts(): no redirect is ever followed, a 3xx is a failed attempt; the
      // connection goes to the addresses judged (pinnedLookup).
      const response = await sendParts(url, {
        method: 'POST',
        headers: deliveryHeaders(webhook.secret, messageId(webhook.id, delivery.eventId), delivery.body, new Date()),
        body: new Blob([delivery.body]).stream(),
        signal: AbortSignal.timeout(this.#timeoutMs),
        lookup: pinnedLookup(target.addresses),
      });
      await response.body?.cancel();
      if (response.status >= 200 && response.status < 300) return { ok: true, statusCode: response.status, latencyMs: latency() };
      return { ok: false, statusCode: response.status, latencyMs: latency(), error: `receiver answered HTTP ${response.status}` };
    } catch (err) {
      return { ok: false, statusCode: null, latencyMs: latency(), error: this.#describe(err) };
    }
  }

  #describe(err: unknown): string {
    const error = err as Error & { code?: string; cause?: { code?: string } };
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${this.#timeoutMs / 1000} s`;
    const code = error.code ?? error.cause?.code;
    return code ? `${code}: ${error.message}` : error.message;
  }

  async #record(delivery: WebhookDeliveryRow, webhook: WebhookRow, outcome: Outcome): Promise<void> {
    const now = new Date();
    const attempts = delivery.attempts + 1;
    const last = { attempts, lastStatusCode: outcome.statusCode, lastLatencyMs: outcome.latencyMs, leasedUntil: null };
    if (outcome.ok) {
      await this.#db.transaction(async (tx) => {
        await tx
          .update(webhookDeliveries)
          .set({ ...last, state: 'delivered', lastError: null, deliveredAt: now })
          .where(eq(webhookDeliveries.id, delivery.id));
        await tx.update(webhooks).set({ failingSince: null }).where(eq(webhooks.id, webhook.id));
      });
      return;
    }
    const { error } = outcome;
    const givenUp = now.getTime() - delivery.createdAt.getTime() >= this.#policy.giveUpAfterMs;
    const failingSince = webhook.failingSince ?? now;
    const disable = now.getTime() - failingSince.getTime() >= this.#policy.disableAfterMs;
    await this.#db.transaction(async (tx) => {
      await tx
        .update(webhookDeliveries)
        .set({
          ...last,
          lastError: error,
          ...(givenUp ? { state: 'failed' as const } : { nextAttemptAt: new Date(now.getTime() + retryDelayMs(this.#policy, attempts)) }),
        })
        .where(eq(webhookDeliveries.id, delivery.id));
      await tx
        .update(webhooks)
        .set({
          failingSince: sql`coalesce(${webhooks.failingSince}, ${now.toISOString()}::timestamptz)`,
          ...(disable ? { enabled: false, disabledReason: `deliveries failing since ${failingSince.toISOString()}; last error: ${error}`, updatedAt: now } : {}),
        })
        .where(eq(webhooks.id, webhook.id));
    });
    this.#log.warn(
      { webhookId: webhook.id, deliveryId: delivery.id, eventId: delivery.eventId, attempts, statusCode: outcome.statusCode, error, givenUp, disabled: disable },
      'webhook delivery attempt failed',
    );
  }
}
