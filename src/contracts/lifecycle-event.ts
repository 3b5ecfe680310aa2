/**
 * The lifecycle event words, shared by the event table, the API models, the reconciler and the
 * client. Types are `<subject>.<what happened>`, derived from the subjects' own status lists so a
 * new status brings its event with it.
 */
import { SANDBOX_STATUSES, type SandboxStatus } from './sandbox.js';
import { START_TASK_STATUSES, type StartTaskStatus } from './start-task.js';

/** What an event is about; subscribers filter on the type, so new kinds do not disturb old receivers. */
export const SUBJECT_KINDS = ['sandbox', 'start_task', 'snapshot', 'engine'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

type Lowered<Prefix extends string, T extends readonly string[]> = { readonly [K in keyof T]: `${Prefix}.${Lowercase<T[K]>}` };

function lowered<Prefix extends string, const T extends readonly string[]>(prefix: Prefix, words: T): Lowered<Prefix, T> {
  return words.map((word) => `${prefix}.${word.toLowerCase()}`) as unknown as Lowered<Prefix, T>;
}

/**
 * `sandbox.created`, one per observed status (`sandbox.running`, ...), `sandbox.claimed` when a
 * start takes it from its spec's warm pool, `sandbox.moved` when a drain moved it to another engine
 * (`status_detail` names both), `sandbox.egress_denied` when its egress policy refused something
 * (at most one per sandbox every ten seconds; `status_detail` says how many and names some), and
 * `sandbox.deleted` (status `DELETED`) once its container and data are gone. An unclaimed warm-pool member has none: its claim records `sandbox.created`, then
 * `sandbox.claimed`.
 */
export const SANDBOX_EVENT_TYPES = ['sandbox.created', ...lowered('sandbox', SANDBOX_STATUSES), 'sandbox.claimed', 'sandbox.moved', 'sandbox.egress_denied', 'sandbox.deleted'] as const;

/** One per start-task status: `start_task.working` ... `start_task.ready`, `start_task.error`. */
export const START_TASK_EVENT_TYPES = lowered('start_task', START_TASK_STATUSES);

/**
 * A snapshot advanced while being taken (`snapshot.progress`, `status` the phase: `measured`,
 * `copied`, `paused`, `committed`; `status_detail` its bytes), was taken (its `sandbox_id` the
 * sandbox it was taken of) or deleted. A snapshot that failed has progress events and no `snapshot.created`.
 */
export const SNAPSHOT_EVENT_TYPES = ['snapshot.progress', 'snapshot.created', 'snapshot.deleted'] as const;

/**
 * An engine was registered, given a new address (by DOCKER_ENGINES at start), cordoned, set
 * draining, uncordoned or removed (through the API or DOCKER_ENGINES), or its reconciler found it
 * unreachable or healthy again. `subject_id` is the engine's name, `status` its state or health.
 */
export const ENGINE_EVENT_TYPES = ['engine.registered', 'engine.updated', 'engine.cordoned', 'engine.draining', 'engine.uncordoned', 'engine.removed', 'engine.unreachable', 'engine.healthy'] as const;

export const LIFECYCLE_EVENT_TYPES = [...SANDBOX_EVENT_TYPES, ...START_TASK_EVENT_TYPES, ...SNAPSHOT_EVENT_TYPES, ...ENGINE_EVENT_TYPES] as const;
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

/** The event a sandbox's new status announces. */
export function sandboxEventType(status: SandboxStatus): LifecycleEventType {
  return `sandbox.${status.toLowerCase() as Lowercase<SandboxStatus>}`;
}

/** The event a start task's new status announces. */
export function startTaskEventType(status: StartTaskStatus): LifecycleEventType {
  return `start_task.${status.toLowerCase() as Lowercase<StartTaskStatus>}`;
}
