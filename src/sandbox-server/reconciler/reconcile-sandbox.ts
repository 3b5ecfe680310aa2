import { eq } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import type { Logger } from '../../logger.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes } from '../db/schema.js';
import type { SandboxStatus } from '../../contracts/sandbox.js';
import { type NewLifecycleEvent, recordEvent } from '../lifecycle-events/record-event.js';
import { sandboxEventType } from '../../contracts/lifecycle-event.js';
import { type ContainerObservation, type ContainerRequest, RuntimeError, type SandboxRuntime } from '../runtime/runtime.js';
import { AGENT_SERVER_PORT_NAME } from '../../contracts/sandbox.js';
import { dataVolumeNameFor } from '../runtime/resource-names.js';
import { containerRequestFor } from './container-request.js';
import type { CreateView } from './creates-in-flight.js';
import type { FrozenAlive } from './frozen-alive.js';
import { planStep, type Step } from './plan-step.js';
import { computeStatus, WAITING_FOR_ALIVE } from './status.js';

export interface SandboxPassInput {
  row: SandboxRow;
  spec: SandboxSpecRow | undefined;
  /** The containers carrying this sandbox's label in the pass's listing. */
  containers: ContainerObservation[];
  create: CreateView;
  /** Its container stopped because the engine went down (see Reconciler), so it may be started again. */
  stoppedByEngine: boolean;
}

export interface SandboxPassContext {
  db: Database;
  /** The reconciler's log: a sandbox turning ERROR is a warning there, with why. */
  log: Logger;
  runtime: SandboxRuntime;
  checkAlive: (url: string, sessionApiKey: string) => Promise<boolean>;
  /** Where the engine publishes ports (its advertise host): health checks go there, and the row records it. */
  advertiseHost: string;
  /** Starts a create in the background; its outcome reaches a later pass through CreateView. */
  startCreate: (request: ContainerRequest) => void;
  dataMountPath: string;
  /** A running container whose agent-server has not answered /alive for this long is ERROR. */
  startTimeoutMs: number;
  /** Told after a sandbox's observed state was written. */
  written: (sandboxId: string) => void;
  /**
   * Whether a probe (alive-probes.ts) of this container's agent-server at `url` was just answered:
   * that answer is this pass's observation, so the pass does not ask again.
   */
  aliveAnswered: (sandboxId: string, containerId: string, url: string) => boolean;
  /**
   * Told when a started sandbox's agent-server did not answer /alive yet, to be probed until it
   * does; true when a probe runs, which kicks a pass once it is answered.
   */
  notAliveYet: (sandboxId: string, containerId: string, url: string, sessionApiKey: string) => boolean;
  /** Containers frozen while their agent-server answered: thawed, they answer without being asked. */
  frozenAlive: FrozenAlive;
}

/** What a pass asks of the queue, as a controller-runtime Reconcile returns a Result. */
export interface SandboxPassResult {
  status: SandboxStatus;
  /** Nothing will announce progress (starting, no create pending): look again after this long. */
  requeueAfterMs?: number;
  /** The step failed in a way worth retrying: back off, then try again. */
  error?: RuntimeError;
}

/**
 * Waiting for /alive: every 100 ms for the first 5 s of starting (creating the container included,
 * which takes a second or two), then every second; every second throughout while a probe asks
 * closely and kicks when it is answered.
 */
const ALIVE_FAST_FOR_MS = 5_000;
const ALIVE_FAST_MS = 100;
const ALIVE_SLOW_MS = 1_000;

/** How much of its log a sandbox that never answered shows in its status_detail. */
const LOG_TAIL_LINES = 20;
const LOG_LINE_MAX_CHARS = 300;

/** The observed columns of a row, the only ones the reconciler writes. */
type Observed = Pick<
  SandboxRow,
  'status' | 'statusDetail' | 'containerId' | 'hostPorts' | 'hostAddress' | 'deletedAt' | 'observedGeneration' | 'agentServerVersion'
>;

/**
 * One pass for one sandbox: from what the listing shows, take one idempotent step toward the
 * desired state, compute the status, and write it if it changed.
 */
export async function reconcileSandbox(input: SandboxPassInput, ctx: SandboxPassContext): Promise<SandboxPassResult> {
  const { row, spec, containers, create } = input;
  const desired = row.desiredState;
  let hadContainer = row.containerId !== null || create.landedContainerId !== undefined;
  let previous = { status: row.status, detail: row.statusDetail };
  // A create that just failed is judged first: final is recorded, retryable waits for back-off.
  const step: Step = create.error
    ? { kind: 'none' }
    : planStep({
        desired,
        containers,
        creating: create.creating,
        hadContainer,
        previousStatus: row.status,
        restartRequested: row.restartGeneration > row.observedGeneration,
        stoppedByEngine: input.stoppedByEngine,
      });

  let container: ContainerObservation | null = containers.length === 1 ? (containers[0] ?? null) : null;
  let creating = create.creating;
  let finished = false;
  let restarted = false;
  let failure = create.error?.final ? create.error.message : null;
  let retryable = create.error && !create.error.final ? create.error : null;
  if (containers.length > 1 && desired !== 'DELETED') {
    failure = `${containers.length} containers claim this sandbox: ${containers.map((c) => c.containerId.slice(0, 12)).join(', ')}`;
  }

  try {
    switch (step.kind) {
      case 'none':
        break;
      case 'create':
        if (!spec) {
          failure = `sandbox spec ${row.specId} not found`;
          break;
        }
        ctx.startCreate(containerRequestFor(row, spec, ctx.dataMountPath));
        creating = true;
        break;
      case 'start':
        await ctx.runtime.start(step.containerId);
        container = (await ctx.runtime.inspect(step.containerId)) ?? null;
        break;
      case 'pause':
        await ctx.runtime.pause(step.containerId);
        if (row.status === 'RUNNING' && row.containerId === step.containerId) ctx.frozenAlive.note(row.id, step.containerId);
        container = container && { ...container, state: 'paused' };
        break;
      case 'unpause':
        await ctx.runtime.unpause(step.containerId);
        container = container && { ...container, state: 'running' };
        break;
      case 'remove':
        for (const containerId of step.containerIds) await ctx.runtime.remove(containerId);
        await ctx.runtime.removeNetworks(row.id);
        await ctx.runtime.removeVolume(dataVolumeNameFor(row.id));
        ctx.frozenAlive.forget(row.id);
        container = null;
        finished = true;
        break;
      case 'restart':
        for (const containerId of step.containerIds) await ctx.runtime.remove(containerId);
        container = null;
        restarted = true;
        // A new generation starts afresh: nothing it had before counts against it.
        hadContainer = false;
        previous = { status: 'STARTING', detail: null };
        failure = null;
        break;
    }
  } catch (error) {
    const runtimeError = error instanceof RuntimeError ? error : new RuntimeError(String(error), false);
    if (runtimeError.final) failure = runtimeError.message;
    else retryable = runtimeError;
  }

  const { alive, probed } =
    container?.state === 'running' && !finished ? await isAlive(row, spec, container, step, ctx) : { alive: false, probed: false };
  if (container?.state === 'running' && !alive && !failure && waitedForAlive(row, previous.status) >= ctx.startTimeoutMs) {
    failure = await neverAnswered(ctx, container.containerId);
  }
  const { status, detail } = computeStatus({
    desired,
    container,
    alive,
    creating,
    ...(create.progress === undefined ? {} : { createProgress: create.progress }),
    hadContainer,
    previous,
    failure,
    retrying: retryable?.message ?? null,
  });
  const hostPorts = container && Object.keys(container.hostPorts).length > 0 ? container.hostPorts : null;
  await writeIfChanged(ctx, row, {
    status,
    statusDetail: detail,
    containerId: restarted ? null : (container?.containerId ?? create.landedContainerId ?? row.containerId),
    hostPorts,
    hostAddress: hostPorts ? ctx.advertiseHost : null,
    deletedAt: finished ? new Date() : null,
    observedGeneration: restarted ? row.restartGeneration : row.observedGeneration,
    agentServerVersion: container ? container.agentServerVersion : row.agentServerVersion,
  });
  const result: SandboxPassResult = { status };
  if (retryable) result.error = retryable;
  // The new generation is created by the next pass, at once.
  else if (restarted) result.requeueAfterMs = 0;
  else if (status === 'STARTING' && !creating) result.requeueAfterMs = probed ? ALIVE_SLOW_MS : aliveRecheckDelay(row, status);
  return result;
}

/** How long the sandbox has been waiting for its agent-server (0 if it only starts waiting now). */
function waitedForAlive(row: SandboxRow, previousStatus: SandboxStatus): number {
  // updatedAt moves with every observed change, so it marks when the wait for /alive began.
  if (previousStatus !== 'STARTING' || row.statusDetail !== WAITING_FOR_ALIVE) return 0;
  return Date.now() - row.updatedAt.getTime();
}

/** The status_detail of a sandbox given up on, with the end of its log to say why. */
async function neverAnswered(ctx: SandboxPassContext, containerId: string): Promise<string> {
  const seconds = Math.round(ctx.startTimeoutMs / 1000);
  let tail: string;
  try {
    tail = (await ctx.runtime.logs(containerId, LOG_TAIL_LINES))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => (line.length > LOG_LINE_MAX_CHARS ? `${line.slice(0, LOG_LINE_MAX_CHARS)}...` : line))
      .join('\n');
  } catch (error) {
    tail = `(its log could not be read: ${error instanceof Error ? error.message : String(error)})`;
  }
  const said = tail ? `; its last log lines:\n${tail}` : '; its log is empty';
  return `the agent-server did not answer /alive within ${seconds} s (SANDBOX_START_TIMEOUT_SECONDS)${said}`;
}

/** How soon to ask again: often while the sandbox has only just begun to start, then calmly. */
function aliveRecheckDelay(row: SandboxRow, status: SandboxStatus): number {
  // updatedAt moves with every observed change, so it marks when the current wait began.
  const waitedMs = row.status === status ? Date.now() - row.updatedAt.getTime() : 0;
  return waitedMs < ALIVE_FAST_FOR_MS ? ALIVE_FAST_MS : ALIVE_SLOW_MS;
}

/** Whether the running container's agent-server answers, and whether a probe now asks it until it does. */
async function isAlive(
  row: SandboxRow,
  spec: SandboxSpecRow | undefined,
  container: ContainerObservation,
  step: Step,
  ctx: SandboxPassContext,
): Promise<{ alive: boolean; probed: boolean }> {
  // Answered before, same container, untouched since: asking again every pass buys nothing.
  if (step.kind === 'none' && row.status === 'RUNNING' && row.containerId === container.containerId) return { alive: true, probed: false };
  // Thawed after it was frozen answering: the same agent-server, where it stopped.
  if (step.kind === 'unpause' && ctx.frozenAlive.take(row.id, container.containerId)) return { alive: true, probed: false };
  // A spec without an agent-server port has nothing to ask; running is all we can know.
  if (!spec?.exposedPorts.some((port) => port.name === AGENT_SERVER_PORT_NAME)) return { alive: true, probed: false };
  const hostPort = container.hostPorts[AGENT_SERVER_PORT_NAME];
  if (hostPort === undefined) return { alive: false, probed: false };
  const url = `http://${ctx.advertiseHost}:${hostPort}`;
  if (ctx.aliveAnswered(row.id, container.containerId, url)) return { alive: true, probed: false };
  if (await ctx.checkAlive(url, row.sessionApiKey)) return { alive: true, probed: false };
  return { alive: false, probed: ctx.notAliveYet(row.id, container.containerId, url, row.sessionApiKey) };
}

/**
 * Writes the observed columns if any changed; a new status (or the end of a deletion) also records
 * its lifecycle event, in the same transaction, unless the sandbox is an unclaimed warm-pool member,
 * which no one can see. Then tells `ctx.written` (the proxy's cached target).
 */
async function writeIfChanged(ctx: SandboxPassContext, row: SandboxRow, next: Observed): Promise<void> {
  const unchanged =
    row.status === next.status &&
    row.statusDetail === next.statusDetail &&
    row.containerId === next.containerId &&
    row.observedGeneration === next.observedGeneration &&
    row.agentServerVersion === next.agentServerVersion &&
    sameHostPorts(row.hostPorts, next.hostPorts) &&
    row.hostAddress === next.hostAddress &&
    (row.deletedAt === null) === (next.deletedAt === null);
  if (unchanged) return;
  const event = statusEvent(row, next);
  await ctx.db.transaction(async (tx) => {
    // The pool fingerprint as of this update: the row is locked from here, so a claim either
    // committed before (the sandbox is someone's: its events count) or waits until after.
    const [written] = await tx
      .update(sandboxes)
      .set({ ...next, updatedAt: new Date() })
      .where(eq(sandboxes.id, row.id))
      .returning({ poolFingerprint: sandboxes.poolFingerprint });
    if (event && written?.poolFingerprint === null) await recordEvent(tx, event);
  });
  if (next.status === 'ERROR' && row.status !== 'ERROR') {
    ctx.log.warn({ sandboxId: row.id, statusDetail: next.statusDetail }, `sandbox ${row.id} is ERROR: ${next.statusDetail ?? 'no detail'}`);
  }
  ctx.written(row.id);
}

/**
 * The event a write announces: a deletion finishing, or a new status; none for a detail alone. A
 * deletion reads DELETED: the row keeps MISSING (OpenHands' statuses have no word for it), but to a
 * reader of events the sandbox did not go missing, it was deleted as asked.
 */
function statusEvent(row: SandboxRow, next: Observed): NewLifecycleEvent | null {
  const deleted = row.deletedAt === null && next.deletedAt !== null;
  if (!deleted && row.status === next.status) return null;
  return {
    type: deleted ? 'sandbox.deleted' : sandboxEventType(next.status),
    subjectKind: 'sandbox',
    subjectId: row.id,
    sandboxId: row.id,
    previousStatus: row.status,
    status: deleted ? 'DELETED' : next.status,
    statusDetail: next.statusDetail,
  };
}

function sameHostPorts(a: Record<string, number> | null, b: Record<string, number> | null): boolean {
  if (a === null || b === null) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
