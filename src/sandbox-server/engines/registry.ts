import { asc, eq } from 'drizzle-orm';
import { UnavailableError } from '../../errors/index.js';
import type { Logger } from '../../logger.js';
import type { Database, Listen } from '../db/client.js';
import { type EngineRow, engines, sandboxes } from '../db/schema.js';
import type { Reconciler } from '../reconciler/index.js';
import { engineAddressProblems } from '../net/engine-address.js';
import { recordUnusableEngine } from '../reconciler/unusable-engine.js';
import { ENGINES_CHANNEL, handOff, KICK_CHANNEL } from '../replicas/hand-off.js';
import { LeaseKeeper } from '../replicas/lease-keeper.js';
import type { SandboxRuntime } from '../runtime/runtime.js';

/** One registered engine as this replica drives it: its runtime, its reconciler, and the lease that says whether this replica runs that reconciler. */
export interface EngineHandle {
  row: EngineRow;
  runtime: SandboxRuntime;
  reconciler: Reconciler;
  lease: LeaseKeeper;
}

export interface EngineRegistryOptions {
  db: Database;
  listen: Listen;
  /** This replica, unique among those sharing the database. */
  replica: string;
  /** How long an engine's lease lasts unrenewed (see LeaseKeeper). */
  leaseTtlMs: number;
  log: Logger;
  runtimeFor(row: EngineRow): SandboxRuntime;
  reconcilerFor(row: EngineRow, runtime: SandboxRuntime): Reconciler;
  /** Makes the agent-server image present on the engine; its reconciler starts after it (a failure is logged). */
  prepare(row: EngineRow, runtime: SandboxRuntime): Promise<void>;
  /** Called when this replica adds an engine (its runtimes are self-tested then) and when it drops one. */
  onAdded?(row: EngineRow, runtime: SandboxRuntime): void;
  onRemoved?(engine: string): void;
}

/** The lease of an engine's reconciler: one replica at a time converges the engine's sandboxes. */
export function reconcilerLease(engine: string): string {
  return `reconciler/${engine}`;
}

/**
 * Every engine in the engines table, each with one runtime and one reconciler in this replica; the
 * reconciler runs only while this replica holds the engine's lease. Engines registered at run time
 * (by any replica) are picked up on a notification on ENGINES_CHANNEL, sent in the transaction that
 * registered them. Work for a sandbox goes to its engine's reconciler: here when this replica holds
 * the lease, else handed to the holder over NOTIFY.
 */
export class EngineRegistry {
  readonly #options: EngineRegistryOptions;
  readonly #engines = new Map<string, EngineHandle>();
  /** Engines whose address no runtime can be made for, and why; tried again at each sync. */
  readonly #unusable = new Map<string, string>();
  readonly #writeListeners = new Set<(sandboxId: string) => void>();
  #syncing: Promise<void> = Promise.resolve();
  #started = false;
  #stopped = false;
  readonly #stopping = new AbortController();
  /** Settles (false) when stop() is called. */
  readonly #stopCalled = new Promise<false>((resolve) => this.#stopping.signal.addEventListener('abort', () => resolve(false), { once: true }));
  #unlisten: Array<() => Promise<void>> = [];
  #stop: Promise<void> | undefined;

  constructor(options: EngineRegistryOptions) {
    this.#options = options;
  }

  /**
   * Seeks every engine's lease (its reconciler runs once won), and follows registrations, removals
   * and handed-off kicks. Before it, sync() builds the engines' runtimes without reconciling.
   */
  async start(): Promise<void> {
    const { listen, log } = this.#options;
    this.#started = true;
    for (const handle of this.handles()) this.#seekLease(handle);
    this.#unlisten.push(await listen(ENGINES_CHANNEL, () => void this.sync().catch((err: unknown) => log.error({ err }, 'engines could not be read'))));
    // An empty payload follows a reconnection of the listener: look at everything.
    this.#unlisten.push(await listen(KICK_CHANNEL, (payload) => this.#kickHandedOff(payload ?? '')));
    await this.sync();
  }

  /** Reads the engines table again: new engines get a runtime, a reconciler and a lease; removed ones stop. */
  sync(): Promise<void> {
    this.#syncing = this.#syncing.catch(() => undefined).then(() => this.#sync());
    return this.#syncing;
  }

  async #sync(): Promise<void> {
    if (this.#stopped) return;
    const rows = await this.#options.db.select().from(engines).orderBy(asc(engines.createdAt), asc(engines.name));
    const names = new Set(rows.map((row) => row.name));
    for (const [name, handle] of this.#engines) {
      if (names.has(name)) continue;
      this.#engines.delete(name);
      this.#options.onRemoved?.(name);
      await handle.lease.stop();
      await handle.runtime.close();
      this.#options.log.info({ engine: name }, 'engine removed: its reconciler stopped');
    }
    for (const name of this.#unusable.keys()) if (!names.has(name)) this.#unusable.delete(name);
    for (const row of rows) {
      const known = this.#engines.get(row.name);
      if (known) known.row = row;
      else this.#addUsable(row);
    }
  }

  /**
   * One engine that cannot be driven (an address written before addresses were checked, or by
   * hand) stops neither the others nor the server: it is recorded as such.
   */
  #addUsable(row: EngineRow): void {
    try {
      const [problem] = engineAddressProblems(row.dockerUrl, row.advertiseHost);
      if (problem) throw new Error(`${problem.field} ${problem.msg}`);
      this.#add(row);
      this.#unusable.delete(row.name);
    } catch (err) {
      const detail = `the address ${row.dockerUrl} cannot be used: ${(err as Error).message}`;
      if (this.#unusable.get(row.name) !== detail) this.#options.log.error({ err, engine: row.name }, 'engine cannot be driven: its sandboxes are ERROR until its address is fixed or it is removed');
      this.#unusable.set(row.name, detail);
      this.#recordUnusable(row.name);
    }
  }

  #recordUnusable(engine: string): void {
    const detail = this.#unusable.get(engine);
    if (detail === undefined) return;
    void recordUnusableEngine(this.#options.db, engine, detail).catch((err: unknown) =>
      this.#options.log.warn({ err, engine }, 'could not record an engine that cannot be driven'),
    );
  }

  #add(row: EngineRow): void {
    const { db, replica, leaseTtlMs, log } = this.#options;
    const runtime = this.#options.runtimeFor(row);
    const reconciler = this.#options.reconcilerFor(row, runtime);
    for (const listener of this.#writeListeners) reconciler.onSandboxWritten(listener);
    const lease = new LeaseKeeper({
      db,
      name: reconcilerLease(row.name),
      holder: replica,
      ttlMs: leaseTtlMs,
      log,
      // The engine's sandboxes wait for its image: its reconciler starts once the image is there.
      // An engine that never answers holds the image up forever (Docker calls have no deadline):
      // shutdown does not wait for it.
      onAcquired: async () => {
        const prepared = this.#options.prepare(row, runtime).then(
          () => true,
          (err: unknown) => {
            log.error({ err, engine: row.name }, 'agent-server image is not available on the engine; its sandboxes cannot start');
            return true;
          },
        );
        if (await Promise.race([prepared, this.#stopCalled])) await reconciler.start();
      },
      onLost: () => reconciler.stop(),
    });
    const handle = { row, runtime, reconciler, lease };
    this.#engines.set(row.name, handle);
    log.info({ engine: row.name, dockerUrl: row.dockerUrl, advertiseHost: row.advertiseHost }, 'engine registered');
    this.#options.onAdded?.(row, runtime);
    if (this.#started) this.#seekLease(handle);
  }

  #seekLease(handle: EngineHandle): void {
    if (this.#stopped) return;
    void handle.lease.start().catch((err: unknown) => this.#options.log.error({ err, engine: handle.row.name }, 'engine lease could not be sought'));
  }

  /**
   * Stops every engine's reconciler, gives the leases up for other replicas, and closes the engines'
   * runtimes; called again, it settles with the first call.
   */
  stop(): Promise<void> {
    this.#stop ??= this.#stopAll();
    return this.#stop;
  }

  async #stopAll(): Promise<void> {
    this.#stopped = true;
    this.#stopping.abort();
    await this.#syncing.catch(() => undefined);
    await Promise.all(this.#unlisten.map((unlisten) => unlisten()));
    await Promise.all([...this.#engines.values()].map((handle) => handle.lease.stop()));
    await Promise.all([...this.#engines.values()].map((handle) => handle.runtime.close()));
  }

  /** The engines this replica knows, in registration order. */
  handles(): EngineHandle[] {
    return [...this.#engines.values()];
  }

  /** The runtime of `engine`; 503 when this replica does not know it (yet). */
  runtimeOf(engine: string): SandboxRuntime {
    const handle = this.#engines.get(engine);
    if (!handle) throw new UnavailableError(`Engine ${engine} is not known to this control plane yet; retry shortly`, 5);
    return handle.runtime;
  }

  /** The row of `engine` as this replica last read it; 503 when it does not know it (yet). */
  rowOf(engine: string): EngineRow {
    const handle = this.#engines.get(engine);
    if (!handle) throw new UnavailableError(`Engine ${engine} is not known to this control plane yet; retry shortly`, 5);
    return handle.row;
  }

  /**
   * Asks for a pass soon, over one sandbox (by its engine's reconciler, looked up unless `engine`
   * names it) or over every engine.
   */
  kick(sandboxId?: string, engine?: string): void {
    const { db, log } = this.#options;
    if (sandboxId === undefined) {
      const elsewhere = this.handles().filter((handle) => !this.#kickHere(handle));
      if (elsewhere.length > 0) handOff(db, KICK_CHANNEL, '', log);
      return;
    }
    const kickOn = (name: string | undefined) => {
      if (name === undefined) return;
      if (this.#unusable.has(name)) return this.#recordUnusable(name);
      const handle = this.#engines.get(name);
      if (!handle || !this.#kickHere(handle, sandboxId)) handOff(db, KICK_CHANNEL, `${name}/${sandboxId}`, log);
    };
    if (engine !== undefined) return kickOn(engine);
    void this.#engineOf(sandboxId).then(kickOn, (err: unknown) =>
      log.warn({ err, sandboxId }, 'could not find the engine of a sandbox to kick; its next sweep looks at it'),
    );
  }

  #kickHere(handle: EngineHandle, sandboxId?: string): boolean {
    if (!handle.lease.held) return false;
    handle.reconciler.kick(sandboxId);
    return true;
  }

  /** `engine/sandbox`, `engine/` (all of the engine), or '' (everything). */
  #kickHandedOff(payload: string): void {
    const slash = payload.indexOf('/');
    if (slash < 0) {
      for (const handle of this.handles()) this.#kickHere(handle);
      return;
    }
    const handle = this.#engines.get(payload.slice(0, slash));
    const sandboxId = payload.slice(slash + 1);
    if (handle) this.#kickHere(handle, sandboxId || undefined);
  }

  /**
   * Whether the sandbox's engine answers: as its reconciler last found, in the replica running it;
   * elsewhere as that reconciler last recorded (the engine's health).
   */
  async engineAvailable(sandboxId: string): Promise<boolean> {
    const [row] = await this.#options.db
      .select({ engine: engines.name, health: engines.health })
      .from(sandboxes)
      .innerJoin(engines, eq(engines.name, sandboxes.engine))
      .where(eq(sandboxes.id, sandboxId));
    if (!row) return true;
    const handle = this.#engines.get(row.engine);
    if (handle?.lease.held) return handle.reconciler.engineAvailable();
    return row.health !== 'UNREACHABLE';
  }

  /** Calls `listener` after each write of a sandbox's observed state, by any engine's reconciler here. */
  onSandboxWritten(listener: (sandboxId: string) => void): () => void {
    this.#writeListeners.add(listener);
    const unsubscribes = this.handles().map((handle) => handle.reconciler.onSandboxWritten(listener));
    return () => {
      this.#writeListeners.delete(listener);
      for (const unsubscribe of unsubscribes) unsubscribe();
    };
  }

  /**
   * The id of the image `image` names on the first engine that has it; null when every engine
   * answered that none has it. Throws when none has it but some engine could not be asked: absent
   * and unknown must not look alike, since a changed id replaces every warm-pool member.
   */
  async imageId(image: string): Promise<string | null> {
    let failure: unknown;
    for (const handle of this.handles()) {
      try {
        const id = await handle.runtime.imageId(image);
        if (id !== null) return id;
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
    return null;
  }

  /**
   * Why a sandbox of `image` could not run, as the first engine that has the image finds; null when
   * it could, or when no engine has it (a start pulls it, or fails saying why). An engine that
   * cannot be asked is passed over: the start finds out.
   */
  async whyImageUnfit(image: string): Promise<string | null> {
    for (const handle of this.handles()) {
      const check = await handle.runtime.checkImage(image).catch(() => undefined);
      if (check?.present) return check.unfit;
    }
    return null;
  }

  async #engineOf(sandboxId: string): Promise<string | undefined> {
    const [row] = await this.#options.db.select({ engine: sandboxes.engine }).from(sandboxes).where(eq(sandboxes.id, sandboxId));
    return row?.engine;
  }
}
