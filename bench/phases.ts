/**
 * Where a start's time goes, from the engine's and the agent-server's own clocks: request ->
 * container created (the engine's Created), -> started (its StartedAt), -> agent-server listening
 * (its `agent-server listening` log line), -> done (what the bench waited for: RUNNING seen, /alive
 * or the first command answered).
 */
import type Docker from 'dockerode';
import { formatMs, percentile, printTable } from './measure.js';

/** Times in ms since the sample began. */
export interface Phases {
  created: number;
  started: number;
  listening: number;
  done: number;
}

/** The engine's Created and StartedAt and the agent-server's `listening` line, relative to `began` (epoch ms). */
export async function containerPhases(container: Docker.Container, began: number, done: number): Promise<Phases> {
  const info = await container.inspect();
  const log = (await container.logs({ stdout: true, stderr: true, follow: false })).toString('utf8');
  const listening = log
    .split('\n')
    .map((line) => line.slice(line.indexOf('{"level"')))
    .find((line) => line.includes('"agent-server listening"'));
  const listeningAt = listening ? (JSON.parse(listening) as { time: number }).time : Number.NaN;
  return {
    created: Date.parse(info.Created) - began,
    started: Date.parse(info.State.StartedAt) - began,
    listening: listeningAt - began,
    done: done - began,
  };
}

/** A column of phase samples: a name and the samples of one contender. */
export type PhaseColumn = [name: string, samples: Phases[]];

/** Prints the p50 of each phase for each column, and each column's difference to the first. */
export function printPhases(doneAs: string, columns: PhaseColumn[]): void {
  const spans: [string, (p: Phases) => number][] = [
    ['request -> container created', (p) => p.created],
    ['created -> started', (p) => p.started - p.created],
    ['started -> agent-server listening', (p) => p.listening - p.started],
    [`listening -> ${doneAs}`, (p) => p.done - p.listening],
    ['total', (p) => p.done],
  ];
  const [first, ...rest] = columns;
  if (!first) return;
  printTable(
    ['phase (p50)', ...columns.map(([name]) => name), ...rest.map(([name]) => `${first[0]} - ${name}`)],
    spans.map(([name, span]) => {
      const p50 = columns.map(([, samples]) => percentile(samples.map(span), 0.5));
      return [name, ...p50.map(formatMs), ...p50.slice(1).map((value) => formatDelta(p50[0]! - value))];
    }),
  );
}

function formatDelta(ms: number): string {
  return `${ms < 0 ? '-' : '+'}${formatMs(Math.abs(ms))}`;
}
