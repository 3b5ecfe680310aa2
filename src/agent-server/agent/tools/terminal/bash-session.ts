/**
 * One long-lived bash process, talked to through pipes (no PTY: nothing to install, works in any
 * container). It runs one command at a time; cwd, variables and functions persist between them.
 *
 * The shell is interactive (`-i`) on purpose, for Ctrl+C: an interactive bash survives SIGINT and
 * abandons the rest of the interrupted command line, the way a terminal user expects, while a
 * non-interactive one either dies or carries on with the next command of the line. Without a
 * terminal there is no foreground job to signal, so Ctrl+C is SIGINT to the session's process
 * group; commands started with `&` ignore it, as they do in any shell without job control.
 *
 * stderr is the same pipe as stdout (the shell's first line is `exec 2>&1`), so output keeps the
 * order in which a terminal would show it.
 */
import { type AgentUser, spawnAsAgent } from '../../../agent-user.js';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { OutputBuffer } from './output-buffer.js';
import { commandLine, createMarker, scanForSentinel, shellSetupLine, type Sentinel } from './sentinel.js';

export interface BashSessionOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  /** The user the shell runs as, when not the agent-server's own. */
  agentUser?: AgentUser;
  /** Most characters of output one observation carries; the middle of longer output is cut. */
  outputLimit: number;
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
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * When bash exits, processes it started in the background may still hold the output pipe open.
 * We kill its process group, and stop waiting for the pipe after this long in case something
 * left the group (setsid) and keeps it open.
 */
const EXIT_DRAIN_MS = 500;
/** Node fires longer timers at once; a timeout this long (24.8 days) means "wait" anyway. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class BashSession {
  readonly pid: number;
  readonly #child: ChildProcessByStdio<Writable, Readable, null>;
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

  private constructor(child: ChildProcessByStdio<Writable, Readable, null>, options: BashSessionOptions) {
    if (child.pid === undefined) throw new Error('bash was spawned without a pid');
    this.pid = child.pid;
    this.#child = child;
    this.#output = new OutputBuffer(options.outputLimit);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.#receive(chunk));
    // A write after bash died fails with EPIPE; the exit handler below reports the death.
    child.stdin.on('error', () => {});
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#killGroup('SIGKILL');
        const drained = () => {
          clearTimeout(timer);
          this.#exitCode = signal === null ? code : null;
          this.#changed();
          resolve();
        };
        const timer = setTimeout(drained, EXIT_DRAIN_MS);
        if (child.stdout.readableEnded) drained();
        else child.stdout.once('end', drained);
      });
    });
    child.stdin.write(shellSetupLine(this.#marker));
  }

  /** Starts bash in `cwd`; rejects when it cannot be started (no bash, bad cwd). */
  static start(options: BashSessionOptions): Promise<BashSession> {
    // bash itself, not `bash -c '...'`: Node's stdio pipes are socketpairs, and a non-interactive
    // bash reading from a socket takes itself for an ssh session and sources ~/.bashrc.
    const child = spawn('bash', ['--noprofile', '--norc', '--noediting', '+H', '-i'], {
      ...spawnAsAgent(options.agentUser, options.env),
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'ignore'],
      // Its own process group, so Ctrl+C and kill reach everything it started and nothing else.
      detached: true,
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        resolve(new BashSession(child, options));
      });
    });
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

  /** Sends a new command line. Whatever a previous, unreported command left is dropped. */
  run(command: string): void {
    this.#seq += 1;
    this.#active = true;
    this.#finished = null;
    this.#output.clear();
    this.#child.stdin.write(commandLine(this.#seq, command));
  }

  /** Text for the running program's stdin. */
  sendInput(text: string): void {
    this.#child.stdin.write(text);
  }

  /** Ctrl+C: SIGINT to the shell and its foreground command. */
  interrupt(): void {
    this.#killGroup('SIGINT');
  }

  /** Output since the last report, taken now, for a report that is not a wait. */
  takeOutput(): string {
    return this.#output.take();
  }

  /**
   * Waits until the active command finishes, the shell exits, `timeoutMs` passes or `signal`
   * aborts, and reports the output since the last report. On timeout or abort the command keeps
   * running; abort also sends it Ctrl+C.
   */
  wait({ timeoutMs, signal }: WaitOptions): Promise<WaitOutcome> {
    if (this.#onChange !== null) throw new Error('BashSession.wait called while another wait is in progress');
    return new Promise((resolve) => {
      const settle = (outcome: WaitOutcome) => {
        clearTimeout(timer);
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
        this.interrupt();
        settle({ kind: 'aborted', output: this.#takeAllOutput() });
      };
      const timer = setTimeout(
        () => settle({ kind: 'timeout', output: this.#takeAllOutput() }),
        Math.min(timeoutMs, MAX_TIMER_MS),
      );
      if (settleIfDone()) return;
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#onChange = () => void settleIfDone();
    });
  }

  /** Kills the shell and everything it started; resolves once it is gone. */
  async close(): Promise<void> {
    if (!this.hasExited) this.#killGroup('SIGKILL');
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

  #killGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // The group is already gone.
    }
  }
}
