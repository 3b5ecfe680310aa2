import type { ReservedSql, Sql } from 'postgres';
import { UnavailableError } from '../../errors/index.js';
import { isConnectionError } from './connection-errors.js';

/**
 * The postgres.js client drizzle is given, made to fail fast instead of hanging. postgres.js 3.4.9
 * can leave a query on a connection that died pending for good (porsager/postgres#1193, seen when
 * PostgreSQL restarts under load), so every query, in a transaction or not, gets a deadline. A
 * query past it, or one that failed because the connection did, rejects with an `UnavailableError`
 * (503, retry shortly), and the pool is replaced: later queries open fresh connections instead of
 * queueing behind a dead one.
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

/** Whether a transaction's connection closed, or failed a query, so that nothing more is sent on it. */
interface ConnectionState {
  lost: boolean;
}

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

  /** `onLost` hears of a connection failure or a passed deadline before it becomes the 503. */
  async function guard<T>(owner: Sql, run: () => PromiseLike<T>, onLost?: () => void): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlinePassedError(deadlineMs)), deadlineMs);
    });
    try {
      return await Promise.race([run(), deadline]);
    } catch (error) {
      if (!(error instanceof DeadlinePassedError) && !isConnectionError(error)) throw error;
      onLost?.();
      replace(owner, error);
      throw new UnavailableError('Service unavailable: the database cannot be reached; retry shortly', 1);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A postgres.js query as drizzle uses it: lazy, `.values()` switches to rows as arrays, then
   * awaited once. In a transaction, `connection` tells whether its connection was lost: a query for
   * a lost one is never handed to postgres.js (see `transaction`).
   */
  function query(owner: Sql, target: Pick<Sql, 'unsafe'>, text: string, params?: Params, queryOptions?: QueryOptions, connection?: ConnectionState) {
    let asArrays = false;
    let result: Promise<unknown> | undefined;
    const settle = () =>
      (result ??= guard(
        owner,
        () => {
          if (connection?.lost) return Promise.reject(Object.assign(new Error('the connection of this transaction closed'), { code: 'CONNECTION_CLOSED' }));
          const pending = target.unsafe(text, params, queryOptions);
          return asArrays ? pending.values() : pending;
        },
        connection && (() => (connection.lost = true)),
      ));
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

  /**
   * A transaction on a reserved connection, begun and ended here rather than by postgres.js's
   * `begin`. postgres.js 3.4.9 writes a query for a connection that has closed from a timer, where
   * it throws (an uncaught TypeError that ends the process); its `begin` does exactly that with
   * the ROLLBACK it sends after any failure. So the connection's closing is watched (postgres.js
   * tells `onclose` of the connection a query ran on), no query is handed to a closed one, and a
   * transaction whose connection was lost, or went past its deadline, gets no ROLLBACK: the server
   * rolls back the transaction of a connection that closed, and its pool is being replaced.
   */
  async function transaction<T>(owner: Sql, fn: (tx: TransactionFacade) => T | Promise<T>): Promise<T> {
    const connection: ConnectionState = { lost: false };
    const reserved = await guard(owner, () => owner.reserve(), () => (connection.lost = true));
    const watch = {
      onexecute: (c: { onclose: (() => void) | null }) => {
        c.onclose = () => (connection.lost = true);
      },
    } as unknown as QueryOptions;
    const run = (text: string, options?: QueryOptions) => query(owner, reserved, text, undefined, options, connection);
    try {
      await run('begin', watch);
      const result = await inScope(connection, run, () => fn(inTransaction(owner, reserved, connection, run)), null);
      await run('commit');
      return result;
    } finally {
      if (!connection.lost) reserved.release();
    }
  }

  let savepoints = 0;

  function inTransaction(owner: Sql, reserved: ReservedSql, connection: ConnectionState, run: (text: string) => PromiseLike<unknown>): TransactionFacade {
    return {
      options,
      unsafe: (text, params, queryOptions) => query(owner, reserved, text, params, queryOptions, connection),
      savepoint: async (fn) => {
        const name = `s${++savepoints}`;
        await run(`savepoint ${name}`);
        const result = await inScope(connection, run, () => fn(inTransaction(owner, reserved, connection, run)), name);
        await run(`release savepoint ${name}`);
        return result;
      },
    };
  }

  const client = {
    options,
    unsafe: (text: string, params?: Params, queryOptions?: QueryOptions) => query(pool, pool, text, params, queryOptions),
    begin: <T>(fn: (tx: TransactionFacade) => T | Promise<T>) => transaction(pool, fn),
  };
  return {
    client: client as unknown as Sql,
    end: () => pool.end({ timeout: deadlineMs / 1000 }),
  };
}

/** Runs `body`; a failure rolls back to `savepoint` (or the whole transaction), unless the connection was lost. */
async function inScope<T>(connection: ConnectionState, run: (text: string) => PromiseLike<unknown>, body: () => T | Promise<T>, savepoint: string | null): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (!connection.lost) await Promise.resolve(run(savepoint ? `rollback to savepoint ${savepoint}` : 'rollback')).catch(() => undefined);
    throw error;
  }
}
