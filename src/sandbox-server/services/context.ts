import type { AgentServerTarget } from '../agent-client.js';
import type { EngineIdentity } from './engines/engine-identity.js';
import type { Database } from '../db/client.js';
import type { RuntimeProbe, SandboxRuntime } from '../runtime/runtime.js';

/** What services need from the reconciler: a nudge to look at a sandbox (or at everything) soon. */
export interface ReconcilerKick {
  /** `engine`, the sandbox's, when the caller knows it: spares looking it up before the kick is handed on. */
  kick(sandboxId?: string, engine?: string): void;
  /** A warm-pool member was claimed: top the pools up soon, without a pass over every sandbox. */
  refillWarmPools?(): void;
  /** Calls `listener` after each write of a sandbox's observed state. Returns an unsubscribe function. */
  onSandboxWritten?(listener: (sandboxId: string) => void): () => void;
  /** Whether the engine of the sandbox answers, as its reconciler last found; absent means it does. */
  engineAvailable?(sandboxId: string): boolean | Promise<boolean>;
}

/** Everything a service verb may use; built once by the app. */
export interface ServiceContext {
  db: Database;
  reconciler: ReconcilerKick;
  /** Starting or resuming beyond this pauses the least recently used running sandboxes. */
  maxRunningSandboxes: number;
  /** Where callers reach the control plane (PUBLIC_URL), for the links it hands out; absent, each request's own origin. */
  publicUrl?: string;
  /** The runtimes the engine has, and those that failed their self-test. */
  runtimes: EngineRuntimes;
  /** The self-test results of an engine's runtimes, as this replica ran them; null until they finish. */
  runtimeProbes?(engine: string): RuntimeProbe[] | null;
  /** What snapshots need from the engine and the reconciler. */
  snapshots: SnapshotEngine;
  /** Counts each start of a spec that has a warm pool: served from it (hit) or cold (miss). */
  countWarmPoolClaim?(specId: string, hit: boolean): void;
  /**
   * Why a sandbox of `image` could not run (an engine has it, and it lacks what the agent-server
   * needs); null when it could or no engine has it yet. Absent, images go unchecked.
   */
  whyImageUnfit?(image: string): Promise<string | null>;
  /** Builds the images of specs made from a Dockerfile (engines/spec-image-builds.ts); absent, such specs are refused. */
  specImages?: SpecImages;
  /** Who the dockerd at a URL says it is (engines/docker-identity.ts); absent, registrations go unchecked. */
  engineIdentity?: EngineIdentity;
  /**
   * Settles at the next status change of any sandbox (a committed lifecycle event, by any
   * replica), or at this process's reconciler's next write of this sandbox's observed state: what
   * a wait for a sandbox to come up wakes on. `stop` ends the wait (what it listened to is
   * dropped). Absent, such waits poll alone.
   */
  nextSandboxChange?(sandboxId: string, stop: AbortSignal): Promise<void>;
  /**
   * The proxy's memory of agent-server targets (proxy/target-cache.ts): a claim from the warm pool
   * tells it the member's target, so that the first request through the proxy reads no database.
   * `mark` before reading the sandbox, `remember` after with that mark. Absent, nothing is told.
   */
  knownTargets?: {
    mark(): number;
    remember(sandboxId: string, target: AgentServerTarget, seen: number): void;
  };
  /** Brings this replica's egress enforcement (egress/) up to date with the database now; absent, nothing enforces allowlists here. */
  applyEgress?(): Promise<void>;
}

/**
 * Snapshots act on the engine from a request, unlike the other verbs (which write intent for the
 * reconciler): a snapshot is of one instant and its caller waits for it. `hold` keeps the
 * reconciler's passes off the sandbox meanwhile, so that nothing unpauses or removes it halfway.
 */
export interface SnapshotEngine {
  /** The runtime of the engine a sandbox or snapshot is on. */
  runtimeOf(engine: string): Pick<SandboxRuntime, 'snapshot' | 'restoreVolume' | 'removeSnapshot' | 'removeVolume'>;
  hold<T>(sandboxId: string, work: () => Promise<T>): Promise<T>;
  /** SNAPSHOT_MAX_MB: a sandbox holding more (writable layer and data volume) is refused; absent, no limit. */
  maxMb?: number;
}

export interface EngineRuntimes {
  /**
   * What `docker info` listed at start, less those that failed their self-test; null when the
   * engine could not be asked (nothing is refused).
   */
  available: readonly string[] | null;
  /** The runtimes that failed their self-test at start, each with why. */
  failed?: ReadonlyMap<string, string>;
  /**
   * Why the host firewall rules that keep a `none` network offline could not be installed; specs
   * with network none are refused then. Absent or null: the rules are in place.
   */
  firewallProblem?: string | null;
}

/** One spec's image to build from a Dockerfile (or find built), and bring onto the engines its sandboxes may be placed on. */
export interface SpecBuildJob {
  specId: string;
  /** The spec row's build_started_at: a spec deleted and created again meanwhile is another build, which this one must not write over. */
  startedAt: Date;
  /** The image tag, named by the input's hash (services/sandbox-specs/build-context.ts). */
  tag: string;
  dockerfile: string;
  /** The context's entries as a tar without its end marker, and its .dockerignore; null: an empty context. */
  context: { archive: Buffer; dockerignore: string | null } | null;
  engineLabels: Record<string, string>;
}

export interface SpecImages {
  /** SPEC_BUILD_CONTEXT_MAX_MB: most bytes a build's context may unpack to. */
  maxContextBytes: number;
  /** How many of the engines a spec with these labels may be placed on have `tag` already, of how many there are. */
  presence(tag: string, engineLabels: Record<string, string>): Promise<{ have: number; of: number }>;
  /** Runs the job in the background: the spec's build status and log are written as it goes. */
  start(job: SpecBuildJob): void;
}
