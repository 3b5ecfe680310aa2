/** Small helpers the benchmarks share: timing, percentiles, memory, the machine's load and table output. */
import { readFileSync } from 'node:fs';

export interface Latencies {
  p50: number;
  p95: number;
  p99: number;
  runs: number;
  /**
   * The CPU time this process spent per run (all its threads: GC helpers and the I/O pool too), in
   * ms. Unlike the wall time it leaves out the time the process waited for a core, so on a shared
   * machine it tells what a run costs from how long the machine made it wait.
   */
  cpuP50: number;
  cpuP99: number;
}

/** Runs `fn` `runs` times, one after the other, and returns its latency percentiles in ms. */
export async function measure(runs: number, fn: (run: number) => Promise<unknown> | unknown): Promise<Latencies> {
  const times: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < runs; run++) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await fn(run);
    times.push(performance.now() - started);
    const used = process.cpuUsage(cpuBefore);
    cpu.push((used.user + used.system) / 1000);
  }
  return {
    p50: percentile(times, 0.5),
    p95: percentile(times, 0.95),
    p99: percentile(times, 0.99),
    runs,
    cpuP50: percentile(cpu, 0.5),
    cpuP99: percentile(cpu, 0.99),
  };
}

/** The value at quantile `q` (0..1) of `values`, nearest rank; `values` is left unsorted. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** How long `fn` took, in ms. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Polls `condition` every `pollMs` until it holds; throws after `timeoutMs`. */
export async function until(condition: () => Promise<boolean>, { pollMs, timeoutMs }: { pollMs: number; timeoutMs: number }): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

export function formatMs(ms: number): string {
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(3)} ms`;
}

export function formatRatio(ratio: number): string {
  return `${ratio >= 100 ? Math.round(ratio).toLocaleString('en-US') : ratio.toFixed(ratio >= 10 ? 1 : 2)}x`;
}

/** Forces two full collections (needs `node --expose-gc`), then reads memory in MB. */
export function memoryAfterGc(): { rss: number; heapUsed: number; arrayBuffers: number } {
  globalThis.gc?.();
  globalThis.gc?.();
  const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
  const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
  return { rss: mb(rss), heapUsed: mb(heapUsed), arrayBuffers: mb(arrayBuffers) };
}

export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

/** The machine's 1, 5 and 15 minute load averages (/proc/loadavg), to print beside timings taken on a shared machine. */
export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}
