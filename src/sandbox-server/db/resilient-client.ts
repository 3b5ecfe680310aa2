import type { Sql, TransactionSql } from 'postgres';
import { UnavailableError } from '../../errors/index.js';
import { isConnectionError } from './connection-errors.js';

/**
 * The postgres.js client drizzle is given, made to fail fast instead of hanging. postgres.js 3.4.9
 * can leave a query on a connection that died pending for good (porsager/postgres#1193, seen when
 * PostgreSQL restarts under load), so every query, and every transaction as a whole, gets a
 * deadline. A query past it, or one that failed because the connection did, rejects with an
 * `UnavailableError` (503, retry shortly), and the pool is replaced: later queries open fresh
 * connections instead of queueing behind a dead one.
 *
 * drizzle uses only `options` (once, to set its type parsers), `unsafe` (every query), `begin` (a
 * transaction) and, inside one, `unsafe` and `savepoint`; that is all this facade offers.
 */
export interface ResilientClient {
  /** What drizzle is given in place of a postgres.js client. */
  client: Sql;
  /** Closes the current pool, letting queries in flight finish for up to the deadline. */
  end(): Promise<void>;
}

export interface ResilientClientOptions {
  /** Opens a new pool (postgres.js connects lazily, so this is cheap). */
  connect: () => Sql;
  /** How long a query, or a whole transaction, may take before it counts as lost. */
  deadlineMs: number;
  /** Told why the pool was replaced, for the log. */
  onReplaced: (reason: unknown) => void;
}

class DeadlinePassedError extends Error {
  constructor(ms: number) {
    super(`no answer from the database within ${ms} ms`);
    this.name = 'DeadlinePassedError';
  }
}

type QueryOptions = Parameters<Sql['unsafe']>[2];
type Params = Parameters<Sql['unsafe']>[1];

/** What drizzle is given inside a transaction in place of postgres.js's transaction client. */
interface TransactionFacade {
  options: Sql['options'];
  unsafe(text: string, params?: Params, queryOptions?: QueryOptions): PromiseLike<unknown>;
  savepoint<T>(fn: (inner: TransactionFacade) => T | Promise<T>): Promise<unknown>;
}

export function createResilientClient({ connect, deadlineMs, onReplaced }: ResilientClientOptions): ResilientClient {
  let pool = connect();
  // drizzle sets its parsers and serializers on the client it is given, once; each new pool takes them.
  const options = pool.options;

  function replace(stale: Sql, reason: unknown): void {
    // Every query that failed on the stale pool lands here; the first one replaces it.
    if (stale !== pool) return;
    pool = connect();
    Object.assign(pool.options.parsers, options.parsers);
    Object.assign(pool.options.serializers, options.serializers);
    onReplaced(reason);
    // Healthy queries still running on it may finish; after the deadline its connections are cut.
    stale.end({ timeout: deadlineMs / 1000 }).catch(() => undefined);
  }

  async function guard<T>(owner: Sql, run: () => PromiseLike<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlinePassedError(deadlineMs)), deadlineMs);
    });
    try {
      return await Promise.race([run(), deadline]);
    } catch (error) {
      if (!(error instanceof DeadlinePassedError) && !isConnectionError(error)) throw error;
      replace(owner, error);
      throw new UnavailableError('Service unavailable: the database cannot be reached; retry shortly', 1);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A postgres.js query as drizzle uses it: lazy, `.values()` switches to rows as arrays, then awaited once. */
  function query(owner: Sql, target: Pick<Sql, 'unsafe'>, text: string, params?: Params, queryOptions?: QueryOptions) {
    let asArrays = false;
    let result: Promise<unknown> | undefined;
    const settle = () =>
      (result ??= guard(owner, () => {
        const pending = target.unsafe(text, params, queryOptions);
        return asArrays ? pending.values() : pending;
      }));
    const pending = {
      values() {
        asArrays = true;
        return pending;
      },
      then<A, B>(onFulfilled?: (value: unknown) => A | PromiseLike<A>, onRejected?: (reason: unknown) => B | PromiseLike<B>) {
        return settle().then(onFulfilled, onRejected);
      },
    };
    return pending;
  }

  function inTransaction(owner: Sql, tx: TransactionSql): TransactionFacade {
    return {
      options,
      unsafe: (text, params, queryOptions) => query(owner, tx, text, params, queryOptions),
      savepoint: (fn) => tx.savepoint((inner) => fn(inTransaction(owner, inner))),
    };
  }

  const client = {
    options,
    unsafe: (text: string, params?: Params, queryOptions?: QueryOptions) => query(pool, pool, text, params, queryOptions),
    begin: <T>(fn: (tx: TransactionFacade) => T | Promise<T>) => {
      const owner = pool;
      return guard(owner, () => owner.begin((tx) => fn(inTransaction(owner, tx))));
    },
  };
  return {
    client: client as unknown as Sql,
    end: () => pool.end({ timeout: deadlineMs / 1000 }),
  };
}
