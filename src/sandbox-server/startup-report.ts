import type { Logger } from '../logger.js';

/** What a started control plane tells its operator once it listens. */
export interface StartupSummary {
  url: string;
  /** e.g. `PGlite in /var/lib/sandbox-server/pglite` or `PostgreSQL at postgres://u:***@db:5432/sandboxes`. */
  database: string;
  installation: string;
  instance: string;
  replica: string;
  replicas: string;
  /** Each engine, its Docker URL, the OCI runtimes it has (null: it did not answer) and the default runtime of specs naming none. */
  engines: { name: string; dockerUrl: string; runtimes: string[] | null }[];
  defaultRuntime: string;
  auth: boolean;
}

/** How start-up is shown: progress while it goes, a summary once the server listens. */
export interface StartupReport {
  step(what: string): void;
  ready(summary: StartupSummary): void;
}

/** For logs collected by a machine: one JSON line per step, and the summary as the `sandbox-server listening` line. */
export function jsonStartupReport(log: Logger): StartupReport {
  return {
    step: (what) => log.info(what),
    ready: (summary) => log.info(summary, 'sandbox-server listening'),
  };
}

/** For a person at a terminal: each step as it begins, with the time since start, then a summary that says where to go. */
export function terminalStartupReport(write: (text: string) => void, now: () => number = () => performance.now()): StartupReport {
  const started = now();
  const seconds = () => `${((now() - started) / 1000).toFixed(1)}s`.padStart(6);
  return {
    step: (what) => write(`${seconds()}  ${what}\n`),
    ready: (summary) => write(`${seconds()}  ready\n\n${formatSummary(summary)}\n`),
  };
}

export function formatSummary(summary: StartupSummary): string {
  const engines = summary.engines.map(
    (engine) => `${engine.name} (${engine.dockerUrl}): runtimes ${engine.runtimes === null ? 'unknown, the engine did not answer' : engine.runtimes.join(', ') || 'none'}`,
  );
  const lines: [string, string][] = [
    ['API', `${summary.url}/api/v1`],
    ['Docs', `${summary.url}/docs`],
    ['Database', summary.database],
    ['Installation', `${summary.installation} (instance label ${summary.instance})`],
    ['Replicas', summary.replicas],
    ...engines.map((engine, index): [string, string] => [index === 0 ? 'Engines' : '', engine]),
    ['Default runtime', summary.defaultRuntime],
    ['Auth', summary.auth ? 'on: clients send "Authorization: Bearer <key>"' : 'OFF: anyone who can reach this address controls the sandboxes (set SANDBOX_SERVER_API_KEYS)'],
  ];
  const width = Math.max(...lines.map(([label]) => label.length));
  return `sandbox-server is listening on ${summary.url}\n${lines.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n')}\n`;
}
