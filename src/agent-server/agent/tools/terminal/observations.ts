/**
 * Every TerminalObservation the terminal tool returns is built here. `content` holds the whole text
 * the LLM reads (output, then bracketed notes on exit code, timeout, working directory), so the
 * loop can forward content as it is; metadata.prefix/suffix stay empty so that a client that
 * renders prefix + content + suffix, as OpenHands does, does not show the notes twice.
 */
import { TerminalObservationSchema } from '../../../../events/index.js';
import { textContent, type TerminalObservation } from '../tool.js';

export interface ShellFacts {
  workingDir: string;
  hostname: string | null;
  username: string | null;
}

const CONTINUED = '[Below is the output of the previous command.]';

const HOW_TO_CONTINUE =
  'To wait for more output, send an empty command with is_input=true; to answer the program (a ' +
  'prompt, a REPL), send the text with is_input=true; to stop it, send "C-c" with is_input=true ' +
  '(C-d and C-z work too). Set a larger timeout for commands that need longer, or run long-lived ' +
  'programs in the background (e.g. `server > server.log 2>&1 &`).';

interface Report {
  command: string;
  output: string;
  /** This reports more output of a command started by an earlier action. */
  continued: boolean;
}

export function completedObservation(
  report: Report & {
    exitCode: number;
    backgroundPid: number;
    facts: ShellFacts;
    interrupted: boolean;
    /** Input came for the command after it had finished; it was not sent anywhere. */
    inputDropped: boolean;
  },
): TerminalObservation {
  const ctrlC = report.interrupted ? ' CTRL+C was sent.' : '';
  const dropped = report.inputDropped ? ' It had finished before your input came, so the input was not sent.' : '';
  return build({
    command: report.command,
    text: compose(report, [
      `[The command completed with exit code ${report.exitCode}.${ctrlC}${dropped}]`,
      `[Current working directory: ${report.facts.workingDir}]`,
    ]),
    exit_code: report.exitCode,
    metadata: metadata(report.facts, report.exitCode, report.backgroundPid),
  });
}

export function timeoutObservation(
  report: Report & { waited: { seconds: number; quiet: boolean }; facts: ShellFacts },
): TerminalObservation {
  const why = report.waited.quiet
    ? `printed nothing new for ${report.waited.seconds} seconds and is still running`
    : `is still running after ${report.waited.seconds} seconds`;
  return build({
    command: report.command,
    text: compose(report, [`[The command ${why}; it keeps running. ${HOW_TO_CONTINUE}]`]),
    exit_code: -1,
    timeout: true,
    metadata: metadata(report.facts, -1, -1),
  });
}

export function abortedObservation(report: Report & { facts: ShellFacts }): TerminalObservation {
  return build({
    command: report.command,
    text: compose(report, ['[The run was stopped, so the command was interrupted with CTRL+C.]']),
    exit_code: -1,
    metadata: metadata(report.facts, -1, -1),
  });
}

export function exitedObservation(
  report: Report & { exitCode: number | null; facts: ShellFacts },
): TerminalObservation {
  const how = report.exitCode === null ? 'ended' : `exited with code ${report.exitCode}`;
  const exitCode = report.exitCode ?? -1;
  return build({
    command: report.command,
    text: compose(report, [
      `[The shell ${how}. The next command starts a new shell in ${report.facts.workingDir}; ` +
        'variables and functions of the old one are gone, and the programs it started were stopped.]',
    ]),
    exit_code: exitCode,
    metadata: metadata(report.facts, exitCode, -1),
  });
}

/** The agent sent a new command while the previous one still runs: not run, with what it printed. */
export function stillRunningObservation(report: Report & { facts: ShellFacts }): TerminalObservation {
  return build({
    command: report.command,
    text: compose({ ...report, continued: true }, [
      `[Your command "${report.command}" was NOT run: the previous command is still running, and the ` +
        `terminal runs one command at a time. ${HOW_TO_CONTINUE}]`,
    ]),
    exit_code: -1,
    is_error: true,
    metadata: metadata(report.facts, -1, -1),
  });
}

export function resetObservation(command: string, workspaceDir: string): TerminalObservation {
  return build({
    command,
    text: resetNote(workspaceDir),
    exit_code: 0,
    metadata: { exit_code: 0, working_dir: workspaceDir },
  });
}

export function resetNote(workspaceDir: string): string {
  return (
    `[The terminal has been reset: a new shell started in ${workspaceDir}. The old shell's variables, ` +
    'functions and working directory are gone, and the programs it was running were killed.]'
  );
}

/** Adds a line before the text of an observation (used to say a reset happened first). */
export function withLeadingNote(observation: TerminalObservation, note: string, command: string): TerminalObservation {
  const text = observation.content.map((item) => ('text' in item ? item.text : '')).join('');
  return { ...observation, command, content: [textContent(`${note}\n${text}`)] };
}

export function terminalErrorObservation(command: string, message: string): TerminalObservation {
  return build({ command, text: message, is_error: true });
}

function compose(report: Report, notes: string[]): string {
  // A newline at the end of a report is held back (it may begin a sentinel), so the report that
  // continues it starts with that newline: drop it there.
  const output = (report.continued ? report.output.replace(/^\n/, '') : report.output).replace(/\n+$/, '');
  const body = report.continued && output !== '' ? [CONTINUED, output] : [output];
  return [...body, ...notes].filter((part) => part !== '').join('\n');
}

function metadata(facts: ShellFacts, exitCode: number, backgroundPid: number) {
  return {
    exit_code: exitCode,
    pid: backgroundPid,
    working_dir: facts.workingDir,
    hostname: facts.hostname,
    username: facts.username,
  };
}

function build(fields: {
  command: string;
  text: string;
  exit_code?: number;
  timeout?: boolean;
  is_error?: boolean;
  metadata?: Partial<TerminalObservation['metadata']>;
}): TerminalObservation {
  const { text, ...rest } = fields;
  return TerminalObservationSchema.parse({ kind: 'TerminalObservation', ...rest, content: [textContent(text)] });
}
