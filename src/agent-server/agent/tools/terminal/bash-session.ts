/**
 * One long-lived bash in a terminal (see shell-process.ts), running one command at a time; cwd,
 * variables and functions persist between them. Commands are typed as whole lines, and the end of
 * each is seen by its sentinel (sentinel.ts). Terminal echo is off while the shell reads commands,
 * so output is what the command printed; a program that reads the terminal itself (a REPL) echoes
 * what it is sent, as it would to a person.
 */
import type { AgentUser } from '../../../agent-user.js';
import { OutputBuffer } from './output-buffer.js';
import { commandLine, createMarker, scanForSentinel, shellSetupLine, type Sentinel } from './sentinel.js';
import { type PtyBackend, type ShellProcess, startShellProcess } from './shell-process.js';
import { TerminalText } from './terminal-text.js';

export interface BashSessionOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  /** The user the shell runs as, when not the agent-server's own. */
  agentUser?: AgentUser;
  /** Most characters of output one observation carries; the middle of longer output is cut. */
  outputLimit: number;
  backend: PtyBackend;
}

export interface CommandResult {
  exitCode: number;
  workingDir: string;
  backgroundPid: number;
}

export type WaitOutcome =
  | { kind: 'completed'; output: string; result: CommandResult }
  | { kind: 'timeout'; output: string }
  | { kind: 'aborted'; output: string }
  | { kind: 'exited'; output: string; exitCode: number | null };

export interface WaitOptions {
  /** Report after this long at most. */
  timeoutMs: number;
  /** Report once no output came for this long. */
  quietMs?: number;
  signal?: AbortSignal;
}
/** Node fires longer timers at once; a timeout this long (24.8 days) means "wait" anyway. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class BashSession {
  readonly #shell: ShellProcess;
  readonly #text = new TerminalText();
  readonly #marker = createMarker();
  readonly #output: OutputBuffer;
  #pending = '';
  #seq = 0;
  /** A command line was sent and its completion not yet reported by `wait`. */
  #active = false;
  #finished: { result: CommandResult; output: string } | null = null;
  #exitCode: number | null | undefined = undefined;
  #onChange: (() => void) | null = null;
  readonly #exited: Promise<void>;

  private constructor(shell: ShellProcess, options: BashSessionOptions) {
    this.#shell = shell;
    this.#output = new OutputBuffer(options.outputLimit);
    shell.onOutput((chunk) => this.#receive(this.#text.push(chunk)));
    this.#exited = shell.exited.then((code) => {
      this.#pending += this.#text.flush();
      this.#exitCode = code;
      this.#changed();
    });
    shell.type(shellSetupLine(this.#marker, { columns: 250, rows: 50 }));
  }

  /** Starts bash in `cwd`; rejects when it cannot be started (no bash, bad cwd). */
  static async start(options: BashSessionOptions): Promise<BashSession> {
    const shell = await startShellProcess(options.backend, { cwd: options.cwd, env: options.env, agentUser: options.agentUser });
    return new BashSession(shell, options);
  }

  get backend(): PtyBackend {
    return this.#shell.backend;
  }

  /** A command was sent and has not finished yet. */
  get isRunning(): boolean {
    return this.#active && this.#finished === null && !this.hasExited;
  }

  /** A command was sent and its end (or the time it ran out) has not been reported by `wait` yet. */
  get hasUnreportedCommand(): boolean {
    return this.#active;
  }

  get hasExited(): boolean {
    return this.#exitCode !== undefined;
  }

  /**
   * Sends a new command line, after exporting `exports` (typed with echo off, so no output shows
   * them). Whatever a previous, unreported command left is dropped.
   */
  run(command: string, exports: Record<string, string> = {}): void {
    this.#seq += 1;
    this.#active = true;
    this.#finished = null;
    this.#output.clear();
    this.#shell.type(commandLine(this.#seq, command, exports));
  }

  /** Text typed at the terminal, for the running program. */
  sendInput(text: string): void {
    this.#shell.type(text);
  }

  /** A control key (`c` for C-c), as the keyboard sends it to the foreground program. */
  sendControl(letter: string): void {
    this.#shell.control(letter);
  }

  /** Output since the last report, taken now, for a report that is not a wait. */
  takeOutput(): string {
    return this.#output.take();
  }

  /**
   * Waits until the active command finishes, the shell exits, `timeoutMs` passes, no output came
   * for `quietMs`, or `signal` aborts, and reports the output since the last report. On timeout
   * or abort the command keeps running; abort also sends it Ctrl+C.
   */
  wait({ timeoutMs, quietMs, signal }: WaitOptions): Promise<WaitOutcome> {
    if (this.#onChange !== null) throw new Error('BashSession.wait called while another wait is in progress');
    return new Promise((resolve) => {
      let quietTimer: NodeJS.Timeout | undefined;
      const settle = (outcome: WaitOutcome) => {
        clearTimeout(timer);
        clearTimeout(quietTimer);
        signal?.removeEventListener('abort', onAbort);
        this.#onChange = null;
        resolve(outcome);
      };
      const settleIfDone = (): boolean => {
        if (this.#finished !== null) {
          const { result, output } = this.#finished;
          this.#finished = null;
          this.#active = false;
          settle({ kind: 'completed', output, result });
          return true;
        }
        if (this.#exitCode !== undefined) {
          this.#active = false;
          settle({ kind: 'exited', output: this.#takeAllOutput(), exitCode: this.#exitCode });
          return true;
        }
        return false;
      };
      const onAbort = () => {
        this.sendControl('c');
        settle({ kind: 'aborted', output: this.#takeAllOutput() });
      };
      const timeUp = () => settle({ kind: 'timeout', output: this.#takeAllOutput() });
      const timer = setTimeout(timeUp, Math.min(timeoutMs, MAX_TIMER_MS));
      const restartQuietTimer = () => {
        if (quietMs === undefined) return;
        clearTimeout(quietTimer);
        quietTimer = setTimeout(timeUp, Math.min(quietMs, MAX_TIMER_MS));
      };
      if (settleIfDone()) return;
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      restartQuietTimer();
      this.#onChange = () => {
        if (!settleIfDone()) restartQuietTimer();
      };
    });
  }

  /** Kills the shell and everything it started; resolves once it is gone. */
  async close(): Promise<void> {
    if (!this.hasExited) await this.#shell.kill();
    await this.#exited;
  }

  #receive(chunk: string): void {
    this.#pending += chunk;
    for (;;) {
      const scan = scanForSentinel(this.#pending, this.#marker);
      this.#output.append(scan.output);
      this.#pending = scan.rest;
      if (scan.sentinel === null) break;
      this.#complete(scan.sentinel);
    }
    this.#changed();
  }

  #complete(sentinel: Sentinel): void {
    const isCurrent = this.#active && this.#finished === null && sentinel.seq === this.#seq;
    if (!isCurrent) {
      this.#output.clear();
      return;
    }
    const { exitCode, workingDir, backgroundPid } = sentinel;
    this.#finished = { result: { exitCode, workingDir, backgroundPid }, output: this.#output.take() };
  }

  /** Buffered output plus any held-back text that turned out not to be a sentinel. */
  #takeAllOutput(): string {
    if (this.hasExited) {
      this.#output.append(this.#pending);
      this.#pending = '';
    }
    return this.#output.take();
  }

  #changed(): void {
    this.#onChange?.();
  }
}
