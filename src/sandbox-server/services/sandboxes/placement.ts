import type { EngineHealth, EngineState } from '../../../contracts/engine.js';

/** An engine as placement sees it: its intent, its health, its room and its labels. */
export interface PlacementCandidate {
  name: string;
  state: EngineState;
  /** null: not looked at yet (a freshly registered engine), which placement gives the benefit of the doubt. */
  health: EngineHealth | null;
  maxSandboxes: number | null;
  labels: Record<string, string>;
  /** Live sandboxes on it now, warm-pool members included. */
  live: number;
}

export type Placement = { engine: string } | { engine: null; why: string };

/**
 * Where a new sandbox goes: an ACTIVE engine with room that carries every label the spec asks for
 * with the same value; of those the reachable ones first (an engine not looked at yet counts as
 * reachable), then the least loaded (fewest live sandboxes), ties by name so that the answer is
 * stable. An UNREACHABLE engine is taken only when no reachable one fits: with one engine, a start
 * while its dockerd restarts waits for it (STARTING), as before there were several.
 * When none fits, `why` says what ruled each engine out.
 */
export function chooseEngine(candidates: readonly PlacementCandidate[], constraints: Record<string, string>): Placement {
  if (candidates.length === 0) return { engine: null, why: 'no engine is registered' };
  const reasons: string[] = [];
  const fitting = candidates.filter((engine) => {
    const why = unfitness(engine, constraints);
    if (why) reasons.push(`${engine.name} ${why}`);
    return why === null;
  });
  const unreachable = (engine: PlacementCandidate) => (engine.health === 'UNREACHABLE' ? 1 : 0);
  const [best] = [...fitting].sort((a, b) => unreachable(a) - unreachable(b) || a.live - b.live || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return best ? { engine: best.name } : { engine: null, why: `no engine can take a new sandbox: ${reasons.join('; ')}` };
}

function unfitness(engine: PlacementCandidate, constraints: Record<string, string>): string | null {
  if (engine.state !== 'ACTIVE') return `is ${engine.state.toLowerCase()}`;
  if (engine.maxSandboxes !== null && engine.live >= engine.maxSandboxes) return `is full (${engine.live}/${engine.maxSandboxes})`;
  const missing = Object.entries(constraints).filter(([key, value]) => engine.labels[key] !== value);
  if (missing.length > 0) return `lacks the label${missing.length > 1 ? 's' : ''} ${missing.map(([key, value]) => `${key}=${value}`).join(', ')}`;
  return null;
}
