import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Logger } from '../../logger.js';
import type { SpecBuildStatus } from '../../contracts/spec-build.js';
import type { Database } from '../db/client.js';
import { sandboxSpecs, specBuildLogs } from '../db/schema.js';
import type { SpecBuildJob } from '../services/context.js';

/** How often what the build printed is written out; followers read about as often. */
const FLUSH_MS = 250;
/** How often a quiet build still renews its heartbeat (the log row's updated_at). */
const HEARTBEAT_MS = 5_000;
/** A BUILDING spec whose heartbeat is older than this lost its builder (its control plane went away). */
export const BUILD_STALE_MS = 60_000;
/** Most characters a build's log keeps; what comes after is cut (the outcome is still told). */
const MAX_LOG_CHARS = 1_000_000;

/**
 * One spec's build log as the build writes it: appended to its row every FLUSH_MS (any replica can
 * follow it), with a heartbeat while the build is quiet. Every write is for this build only: a spec
 * deleted and created again meanwhile (another build_started_at) is not written over.
 */
export class SpecBuildLog {
  #pending = '';
  #written = 0;
  #cut = false;
  readonly #timer: NodeJS.Timeout;
  #lastWrite = Date.now();
  #writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly job: Pick<SpecBuildJob, 'specId' | 'startedAt'>,
    private readonly log: Logger,
  ) {
    this.#timer = setInterval(() => {
      if (this.#pending || Date.now() - this.#lastWrite >= HEARTBEAT_MS) this.#flush();
    }, FLUSH_MS);
    this.#timer.unref();
  }

  line(text: string): void {
    this.append(`${text}\n`);
  }

  append(text: string): void {
    if (this.#cut) return;
    if (this.#written + this.#pending.length + text.length > MAX_LOG_CHARS) {
      this.#cut = true;
      this.#pending += `\n(log cut at ${MAX_LOG_CHARS.toLocaleString('en-US')} characters)\n`;
      return;
    }
    this.#pending += text;
  }

  /** Writes what is left, then the outcome. */
  async finish(status: Exclude<SpecBuildStatus, 'BUILDING'>, detail: string | null): Promise<void> {
    clearInterval(this.#timer);
    if (this.#cut && detail !== null) this.#pending += `failed: ${detail}\n`;
    this.#flush();
    await this.#writing;
    await this.db
      .update(sandboxSpecs)
      .set({ buildStatus: status, buildDetail: detail, buildFinishedAt: new Date() })
      .where(this.#thisBuild())
      .catch((err: unknown) => this.log.error({ err, specId: this.job.specId }, 'could not record how a spec build ended'));
  }

  #thisBuild() {
    return and(eq(sandboxSpecs.id, this.job.specId), eq(sandboxSpecs.buildStartedAt, this.job.startedAt), isNull(sandboxSpecs.deletedAt));
  }

  #flush(): void {
    const text = this.#pending;
    this.#pending = '';
    this.#written += text.length;
    this.#lastWrite = Date.now();
    this.#writing = this.#writing.then(async () => {
      const current = this.db.select({ id: sandboxSpecs.id }).from(sandboxSpecs).where(this.#thisBuild());
      await this.db
        .update(specBuildLogs)
        .set({ log: sql`${specBuildLogs.log} || ${text}`, updatedAt: new Date() })
        .where(and(eq(specBuildLogs.specId, this.job.specId), sql`exists (${current})`))
        .catch((err: unknown) => this.log.warn({ err, specId: this.job.specId }, 'could not write a spec build log'));
    });
  }
}

/**
 * Ends the builds whose builder went away (a control plane that crashed or was killed mid-build):
 * BUILDING specs whose log's heartbeat is older than BUILD_STALE_MS are FAILED saying so.
 */
export async function failAbandonedBuilds(db: Database): Promise<number> {
  const stale = db
    .select({ id: specBuildLogs.specId })
    .from(specBuildLogs)
    .where(lt(specBuildLogs.updatedAt, new Date(Date.now() - BUILD_STALE_MS)));
  const rows = await db
    .update(sandboxSpecs)
    .set({ buildStatus: 'FAILED', buildDetail: 'the control plane building it stopped before the build ended; create the spec again', buildFinishedAt: new Date() })
    .where(and(eq(sandboxSpecs.buildStatus, 'BUILDING'), sql`${sandboxSpecs.id} in (${stale})`))
    .returning({ id: sandboxSpecs.id });
  return rows.length;
}
