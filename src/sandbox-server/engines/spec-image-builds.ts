import { and, asc, eq, isNull } from 'drizzle-orm';
import type Docker from 'dockerode';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import { type EngineRow, engines, sandboxSpecs } from '../db/schema.js';
import { dockerFor } from '../runtime/docker-for.js';
import { buildSpecImage, copyImage, SpecImageBuildError } from '../image/index.js';
import { imageIdOn } from '../runtime/image-id.js';
import type { SpecBuildJob, SpecImages } from '../services/context.js';
import { SpecBuildLog } from './spec-build-log.js';

/** An engine a spec's sandboxes may be placed on, with a client of its dockerd. */
export interface BuildEngine {
  name: string;
  docker: Docker;
}

export interface SpecImageBuildsOptions {
  db: Database;
  log: Logger;
  /** The engines a spec with these labels may be placed on (active, answering, carrying them all), in placement order. */
  enginesFor(engineLabels: Record<string, string>): Promise<BuildEngine[]>;
  /** SPEC_BUILD_CONTEXT_MAX_MB, in bytes. */
  maxContextBytes: number;
  /** SPEC_BUILD_TIMEOUT_SECONDS, in ms: a build running longer is stopped and FAILED. */
  timeoutMs: number;
  /** Labels every built image carries (whose installation built it). */
  imageLabels: Record<string, string>;
}

/** A build running in this process, which a second spec of the same input joins rather than building again. */
interface RunningBuild {
  done: Promise<BuildEngine>;
  listeners: Set<(text: string) => void>;
}

/** The engines a spec with `labels` may be placed on: active, not known unreachable, carrying every label; oldest first. */
export async function buildEnginesFor(db: Database, tlsCertDir: string | undefined, labels: Record<string, string>): Promise<BuildEngine[]> {
  const rows = await db.select().from(engines).orderBy(asc(engines.createdAt), asc(engines.name));
  return rows
    .filter((row) => row.state === 'ACTIVE' && row.health !== 'UNREACHABLE' && Object.entries(labels).every(([name, value]) => row.labels[name] === value))
    .map((row) => ({ name: row.name, docker: dockerFor(row, tlsCertDir) }));
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/**
 * Builds specs' images in the background, each once per input: the image is tagged by the hash of
 * its Dockerfile and context, so input built before is found (a cache hit) and only copied to the
 * engines that lack it, and a second spec of the same input while it builds joins that build. The
 * image is built on one engine (the first the spec may be placed on that answers), its output
 * streamed to the log, then on every other engine at once: with the FROM image there and the
 * context in hand that takes seconds, where `docker save` into `docker load` streams the whole
 * image, base layers included. An engine the build fails on gets the first engine's image copied
 * that way. Each spec's log and state are written to its row as the build goes (spec-build-log.ts).
 */
export class SpecImageBuilds implements SpecImages {
  readonly maxContextBytes: number;
  readonly #options: SpecImageBuildsOptions;
  readonly #running = new Map<string, RunningBuild>();
  readonly #jobs = new Map<string, { stop: AbortController; done: Promise<void> }>();

  constructor(options: SpecImageBuildsOptions) {
    this.#options = options;
    this.maxContextBytes = options.maxContextBytes;
  }

  async presence(tag: string, engineLabels: Record<string, string>): Promise<{ have: number; of: number }> {
    const targets = await this.#options.enginesFor(engineLabels);
    const ids = await Promise.all(targets.map((target) => imageIdOn(target.docker, tag).catch(() => null)));
    return { have: ids.filter((id) => id !== null).length, of: targets.length };
  }

  start(job: SpecBuildJob): void {
    const stop = new AbortController();
    const done = this.#run(job, stop.signal).finally(() => this.#jobs.delete(job.specId));
    this.#jobs.set(job.specId, { stop, done });
  }

  /** Stops every build this process runs; each spec is FAILED saying the control plane stopped. */
  async stop(): Promise<void> {
    for (const { stop } of this.#jobs.values()) stop.abort('the control plane stopped during the build; create the spec again');
    await Promise.all([...this.#jobs.values()].map((job) => job.done));
  }

  async #run(job: SpecBuildJob, stopped: AbortSignal): Promise<void> {
    const { db, log } = this.#options;
    const buildLog = new SpecBuildLog(db, job, log);
    const startedAt = Date.now();
    const signal = AbortSignal.any([stopped, AbortSignal.timeout(this.#options.timeoutMs)]);
    try {
      const targets = await this.#options.enginesFor(job.engineLabels);
      if (targets.length === 0) throw new SpecImageBuildError('no active engine carries the spec\'s engine_labels: there is nowhere to build its image');
      const ids = await Promise.all(targets.map((target) => imageIdOn(target.docker, job.tag).catch(() => null)));
      const holder = targets.find((_, index) => ids[index] !== null);
      const source = holder ?? (await this.#buildOnce(job, targets, buildLog, signal));
      const lacking = targets.filter((target, index) => ids[index] === null && target.name !== source.name);
      await Promise.all(lacking.map((target) => this.#bring(job, source, target, buildLog, signal)));
      buildLog.line(`ready in ${seconds(startedAt)}: ${job.tag} is on ${targets.map((target) => target.name).join(', ')}`);
      await buildLog.finish('READY', null);
      log.info({ specId: job.specId, image: job.tag, durationMs: Date.now() - startedAt, engines: targets.length }, 'spec image ready');
    } catch (error) {
      const reason = signal.aborted && !stopped.aborted
        ? `the build took longer than ${this.#options.timeoutMs / 1000} s (SPEC_BUILD_TIMEOUT_SECONDS)`
        : error instanceof Error ? error.message : String(error);
      buildLog.line(`failed: ${reason}`);
      await buildLog.finish('FAILED', reason);
      log.warn({ specId: job.specId, image: job.tag, reason }, 'spec image build failed');
    }
  }

  /** The engine that built `job.tag`: this process's running build of the same input, joined, or a new one. */
  async #buildOnce(job: SpecBuildJob, targets: BuildEngine[], buildLog: SpecBuildLog, signal: AbortSignal): Promise<BuildEngine> {
    let running = this.#running.get(job.tag);
    if (running) buildLog.line(`the same Dockerfile and context are building for another spec: waiting for that build`);
    else {
      const listeners = new Set<(text: string) => void>();
      const done = this.#buildOnFirstAnswering(job, targets, (text) => {
        for (const listener of listeners) listener(text);
      }, signal).finally(() => this.#running.delete(job.tag));
      running = { done, listeners };
      this.#running.set(job.tag, running);
    }
    const listener = (text: string) => buildLog.append(text);
    running.listeners.add(listener);
    try {
      return await running.done;
    } finally {
      running.listeners.delete(listener);
    }
  }

  /** Builds on the first target that answers; one that cannot be reached passes the build to the next. */
  async #buildOnFirstAnswering(job: SpecBuildJob, targets: BuildEngine[], tell: (text: string) => void, signal: AbortSignal): Promise<BuildEngine> {
    let unreachable: unknown;
    for (const target of targets) {
      const startedAt = Date.now();
      try {
        await target.docker.ping();
      } catch (error) {
        unreachable = error;
        tell(`engine ${target.name} does not answer (${(error as Error).message}); trying the next\n`);
        continue;
      }
      tell(`building on engine ${target.name}\n`);
      await buildSpecImage(
        target.docker,
        { tag: job.tag, dockerfile: job.dockerfile, context: job.context, labels: this.#options.imageLabels, signal },
        tell,
      );
      tell(`built ${job.tag} on engine ${target.name} in ${seconds(startedAt)}\n`);
      return target;
    }
    throw new SpecImageBuildError(`no engine to build on answers: ${(unreachable as Error | undefined)?.message ?? 'none'}`);
  }

  /**
   * Makes the image present on another engine: built there too, which takes seconds when the
   * engine has the FROM image (a copy streams the whole image, base layers included), else copied.
   */
  async #bring(job: SpecBuildJob, source: BuildEngine, target: BuildEngine, buildLog: SpecBuildLog, signal: AbortSignal): Promise<void> {
    const startedAt = Date.now();
    try {
      // Its output would repeat the first engine's; a failure's reason names the step.
      await buildSpecImage(target.docker, { tag: job.tag, dockerfile: job.dockerfile, context: job.context, labels: this.#options.imageLabels, signal }, () => undefined);
      buildLog.line(`engine ${target.name}: built there too in ${seconds(startedAt)}`);
    } catch (error) {
      if (signal.aborted) throw error;
      buildLog.line(`engine ${target.name}: building there failed (${(error as Error).message}); copying the image from ${source.name}`);
      await this.#copy(job.tag, source, target, buildLog);
    }
  }

  async #copy(tag: string, source: BuildEngine, target: BuildEngine, buildLog: SpecBuildLog): Promise<void> {
    const startedAt = Date.now();
    try {
      await copyImage(source.docker, target.docker, tag, (line) => buildLog.line(`engine ${target.name}: ${line}`));
      buildLog.line(`engine ${target.name}: copied from ${source.name} in ${seconds(startedAt)}`);
    } catch (error) {
      throw new Error(`copying ${tag} from engine ${source.name} to engine ${target.name} failed: ${(error as Error).message}`);
    }
  }
}

/**
 * The built images an engine lacks, brought to it from an engine that has them (save into load:
 * their Dockerfile and context are not kept): each image of a READY spec whose engine_labels the
 * engine carries. Run when an engine is added after those specs were built, before its reconciler
 * starts, so that no sandbox placed on it finds its image missing. Answers what it copied.
 */
export async function bringBuiltImages(db: Database, tlsCertDir: string | undefined, row: EngineRow, log: Logger): Promise<string[]> {
  const specs = await db
    .select({ image: sandboxSpecs.image, engineLabels: sandboxSpecs.engineLabels })
    .from(sandboxSpecs)
    .where(and(eq(sandboxSpecs.buildStatus, 'READY'), isNull(sandboxSpecs.deletedAt)));
  const images = [...new Set(specs.filter((spec) => Object.entries(spec.engineLabels).every(([name, value]) => row.labels[name] === value)).map((spec) => spec.image))];
  if (images.length === 0) return [];
  const target = { name: row.name, docker: dockerFor(row, tlsCertDir) };
  const others = (await buildEnginesFor(db, tlsCertDir, {})).filter((engine) => engine.name !== row.name);
  const copied: string[] = [];
  for (const image of images) {
    if ((await imageIdOn(target.docker, image)) !== null) continue;
    const ids = await Promise.all(others.map((engine) => imageIdOn(engine.docker, image).catch(() => null)));
    const source = others.find((_, index) => ids[index] !== null);
    if (!source) {
      log.warn({ image, engine: row.name }, 'no engine has this built image to copy: sandboxes of its specs placed here will fail until the spec is built again');
      continue;
    }
    await copyImage(source.docker, target.docker, image, (line) => log.info({ image, engine: row.name, from: source.name }, line));
    copied.push(image);
  }
  return copied;
}
