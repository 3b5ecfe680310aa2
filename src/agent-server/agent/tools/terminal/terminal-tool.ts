/**
 * The `terminal` tool: a persistent bash session in the workspace. The shell starts with the first
 * command (a conversation that never uses it costs no process) and again after it exits or a reset.
 */
import type { AgentUser } from '../../../agent-user.js';
import os from 'node:os';
import { TerminalActionSchema, TerminalToolSchema } from '../../../../events/index.js';
import { createSerialQueue } from '../serial-queue.js';
import {
  actionParameters,
  parseActionArguments,
  type TerminalAction,
  type TerminalObservation,
  type Tool,
  type ToolContext,
} from '../tool.js';
import { BashSession } from './bash-session.js';
import { availablePtyBackend, type PtyBackend } from './shell-process.js';
import {
  abortedObservation,
  completedObservation,
  exitedObservation,
  resetNote,
  resetObservation,
  stillRunningObservation,
  terminalErrorObservation,
  timeoutObservation,
  withLeadingNote,
  type ShellFacts,
} from './observations.js';

export interface TerminalToolOptions {
  /** Where the shell starts, and starts again after a reset. */
  workspaceDir: string;
  /**
   * Seconds without new output after which an action with no `timeout` of its own reports its
   * command as still running (it keeps running); OpenHands' `no_change_timeout_seconds`.
   */
  noChangeTimeoutSeconds?: number;
  /** The terminal to use; by default tmux where the image has it, else script (see shell-process.ts). */
  backend?: PtyBackend;
  /** Most characters of output in one observation; the middle of longer output is cut. */
  outputLimit?: number;
  /** The user the shell runs as, when not the agent-server's own. */
  agentUser?: AgentUser;
  /** The shell's environment (less the session key settings); by default ours (see shellEnvironment). */
  env?: Record<string, string | undefined>;
  /** Secrets the shell holds as variables, asked again before every command. */
  secrets?: ShellSecrets;
}

/** Where the shell's secret variables come from (the conversation's SecretVault). */
export interface ShellSecrets {
  /** The variables the shell should hold before it runs `command`. */
  environment(command: string): Promise<Record<string, string>>;
}

export const TERMINAL_DEFAULTS = { noChangeTimeoutSeconds: 30, outputLimit: 30_000 } as const;

const describe = (noChangeTimeoutSeconds: number) => `Run a bash command in a persistent shell session in the workspace, in a real terminal (TTY).

* The session persists: the working directory, environment variables and shell functions carry over from one command to the next.
* One command at a time. Chain commands with \`&&\` or \`;\`; multi-line commands and heredocs work.
* stdout and stderr are both returned, in order. Very long output is cut in the middle; redirect it to a file and read it in parts.
* A call returns when the command finishes, when it has printed nothing new for ${noChangeTimeoutSeconds} seconds, or after \`timeout\` seconds if you set one. A command still running then keeps running, and you get its output so far with exit code -1. Then, with \`is_input\` set to true: send an empty command to wait for more output, send text to answer the program (a prompt, a \`python3\` REPL, \`read -p\`), or send a control key: \`C-c\` interrupts it, \`C-d\` ends its input, \`C-z\` stops it. Set a larger \`timeout\` for long builds or tests.
* Run servers and other long-lived programs in the background with their output in a file, e.g. \`python3 app.py > server.log 2>&1 &\`.
* Prefer non-interactive commands and flags (\`git --no-pager\`, \`apt-get -y\`); full-screen programs work but their screens read poorly as text.
* Set \`reset\` to true to start a new shell if this one stops responding; its state and running programs are lost.`;

export function createTerminalTool(options: TerminalToolOptions): Tool<TerminalAction, TerminalObservation> {
  const { workspaceDir } = options;
  const noChangeTimeoutSeconds = options.noChangeTimeoutSeconds ?? TERMINAL_DEFAULTS.noChangeTimeoutSeconds;
  const outputLimit = options.outputLimit ?? TERMINAL_DEFAULTS.outputLimit;
  const env = options.env ?? shellEnvironment(process.env);
  const description = describe(noChangeTimeoutSeconds);
  const identity = { hostname: os.hostname(), username: options.agentUser?.name ?? currentUsername() };
  const serially = createSerialQueue();
  let session: BashSession | null = null;
  let workingDir = workspaceDir;
  /** The secret variables the current shell holds. */
  let exported: Record<string, string> = {};

  const facts = (): ShellFacts => ({ workingDir, ...identity });

  async function currentSession(secrets: Record<string, string>): Promise<BashSession> {
    if (session === null || session.hasExited) {
      await session?.close();
      const backend = options.backend ?? availablePtyBackend();
      if (backend === null) throw new Error('this image has neither tmux nor script (util-linux), so no terminal can be opened');
      session = await BashSession.start({ cwd: workspaceDir, env: { ...env, ...secrets }, outputLimit, agentUser: options.agentUser, backend });
      workingDir = workspaceDir;
      exported = secrets;
    }
    return session;
  }

  /** The secrets that changed since the shell got its own: exported ahead of the next command. */
  function secretChanges(secrets: Record<string, string>): Record<string, string> {
    const changes = Object.fromEntries(Object.entries(secrets).filter(([name, value]) => exported[name] !== value));
    exported = { ...exported, ...changes };
    return changes;
  }

  async function closeSession(): Promise<void> {
    const closing = session;
    session = null;
    await closing?.close();
  }

  async function report(
    shell: BashSession,
    action: TerminalAction,
    ctx: ToolContext,
    how: { continued: boolean; interrupted?: boolean; inputDropped?: boolean },
  ): Promise<TerminalObservation> {
    const waited = action.timeout === null ? { seconds: noChangeTimeoutSeconds, quiet: true } : { seconds: action.timeout, quiet: false };
    const outcome = await shell.wait(
      waited.quiet ? { timeoutMs: Infinity, quietMs: waited.seconds * 1000, signal: ctx.signal } : { timeoutMs: waited.seconds * 1000, signal: ctx.signal },
    );
    if (outcome.kind === 'completed') workingDir = outcome.result.workingDir;
    if (outcome.kind === 'exited') workingDir = workspaceDir;
    return observationOf(outcome, { command: action.command, output: outcome.output, continued: how.continued }, waited, how, facts());
  }

  async function run(action: TerminalAction, ctx: ToolContext): Promise<TerminalObservation> {
    const { command } = action;
    const fail = (message: string) => terminalErrorObservation(command, message);
    if (action.reset && action.is_input) {
      return fail('reset=true cannot be combined with is_input=true: a reset kills the running program.');
    }
    if (ctx.signal?.aborted) return fail('The command was not run: the run was stopped.');
    if (action.reset) {
      await closeSession();
      if (command.trim() === '') return resetObservation(command, workspaceDir);
      const observation = await run({ ...action, reset: false }, ctx);
      return withLeadingNote(observation, resetNote(workspaceDir), command);
    }

    const secrets = (await options.secrets?.environment(command)) ?? {};
    let shell: BashSession;
    try {
      shell = await currentSession(secrets);
    } catch (error) {
      return fail(`Could not start bash in ${workspaceDir}: ${(error as Error).message}`);
    }
    const key = controlKey(command);
    if (action.is_input || key !== null || command.trim() === '') {
      if (!shell.hasUnreportedCommand) {
        return fail('No command is running: there is no output to wait for and no program to send input to.');
      }
      // A command that finished since the last report gets no input: its end is reported instead.
      const deliver = shell.isRunning && command !== '';
      if (deliver && key !== null) shell.sendControl(key);
      else if (deliver) shell.sendInput(`${command}\n`);
      return report(shell, action, ctx, {
        continued: true,
        interrupted: deliver && key === 'c',
        inputDropped: !deliver && command !== '',
      });
    }
    if (shell.isRunning) {
      return stillRunningObservation({ command, output: shell.takeOutput(), continued: true, facts: facts() });
    }
    shell.run(command, secretChanges(secrets));
    return report(shell, action, ctx, { continued: false });
  }

  return {
    name: 'terminal',
    description,
    parameters: parametersOf(noChangeTimeoutSeconds),
    actionKind: 'TerminalAction',
    observationKind: 'TerminalObservation',
    definition: definitionOf(description),
    parseArguments: (args) => parseActionArguments('terminal', TerminalActionSchema, args),
    execute: (action, ctx = {}) => serially(() => run(action, ctx)),
    close: () => serially(closeSession),
  };
}

/** What the agent is told of a command's outcome (`facts` as they stand after it). */
function observationOf(
  outcome: Awaited<ReturnType<BashSession['wait']>>,
  base: { command: string; output: string; continued: boolean },
  waited: { seconds: number; quiet: boolean },
  how: { interrupted?: boolean; inputDropped?: boolean },
  facts: ShellFacts,
): TerminalObservation {
  switch (outcome.kind) {
    case 'completed':
      return completedObservation({
        ...base,
        exitCode: outcome.result.exitCode,
        backgroundPid: outcome.result.backgroundPid,
        facts,
        interrupted: how.interrupted ?? false,
        inputDropped: how.inputDropped ?? false,
      });
    case 'timeout':
      return timeoutObservation({ ...base, waited, facts });
    case 'aborted':
      return abortedObservation({ ...base, facts });
    case 'exited':
      return exitedObservation({ ...base, exitCode: outcome.exitCode, facts });
  }
}

/** The action's parameters as the LLM is shown them. */
function parametersOf(noChangeTimeoutSeconds: number): Tool<TerminalAction, TerminalObservation>['parameters'] {
  return actionParameters(TerminalActionSchema, {
    command:
      'The bash command to run. With is_input=true: text for the running program, an empty string to ' +
      'wait for more output, or a control key: `C-c` to interrupt it, `C-d` for end of input, `C-z` to stop it.',
    is_input: 'If true, `command` goes to the running program instead of starting a new command.',
    timeout:
      'Seconds to wait for the command before reporting its output so far; without it, the call returns once the command ' +
      `printed nothing new for ${noChangeTimeoutSeconds} seconds. The command keeps running after that.`,
    reset: 'If true, kill this shell and start a new one (then run `command`, if any).',
  });
}

/** The tool as OpenHands' agent server describes it. */
function definitionOf(description: string): Tool<TerminalAction, TerminalObservation>['definition'] {
  return TerminalToolSchema.parse({
    kind: 'TerminalTool',
    title: 'terminal',
    description,
    action_type: 'TerminalAction',
    observation_type: 'TerminalObservation',
    annotations: {
      title: 'terminal',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
  });
}

/**
 * The environment the agent's shell gets: ours, with a terminal type that asks programs for plain
 * text (no colours or cursor motion to strip) and no pagers waiting for a key (spawnAsAgent leaves
 * out the keys that guard this agent-server).
 */
export function shellEnvironment(base: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return { ...base, TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' };
}

/** The letter of a control key such as `C-c`, lower-cased, or null for ordinary text. */
function controlKey(command: string): string | null {
  const m = /^C-([a-z])$/i.exec(command.trim());
  return m?.[1]?.toLowerCase() ?? null;
}

function currentUsername(): string | null {
  try {
    return os.userInfo().username;
  } catch {
    // A uid without a passwd entry, common in containers.
    return null;
  }
}
