/**
 * The agent's bash, running in a real terminal (a PTY), so programs that need one work: prompts,
 * REPLs, pagers, full-screen programs, and control keys as a keyboard sends them (C-c, C-d, C-z
 * reach the foreground job through the terminal's line discipline). Two ways to get a PTY without
 * a native module, chosen at run time by what the image has:
 *
 * - `tmux` (as OpenHands): a tmux server of the agent user's own holds the terminal; we drive it as
 *   a control-mode client over pipes (`tmux -C`): keys go in as `send-keys`, output comes back as
 *   `%output` notifications, as it is written, with no polling.
 * - `script` (util-linux, in every Debian and Red Hat image): `script` puts the shell on a new PTY
 *   and copies our stdin to it and its output to our stdout.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { type AgentUser, spawnAsAgent } from '../../../agent-user.js';
import { hasProgram } from '../search/run-search.js';
import { killProcessTree } from './process-tree.js';

export type PtyBackend = 'tmux' | 'script';

export interface ShellProcessOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  agentUser?: AgentUser;
}

export interface ShellProcess {
  readonly backend: PtyBackend;
  /** Text typed at the keyboard; a newline is the Enter key. */
  type(text: string): void;
  /** A control key: `c` for C-c. */
  control(letter: string): void;
  onOutput(listener: (text: string) => void): void;
  /** Resolves once the shell is gone, with its exit code where the backend knows it. */
  readonly exited: Promise<number | null>;
  /** Kills the shell, what it started, and the terminal; resolves once the shell is gone. */
  kill(): Promise<void>;
}

/** The shell in the terminal: no profiles, no readline (we type whole lines), no history expansion. */
const BASH_ARGS = ['bash', '--noprofile', '--norc', '--noediting', '+H', '-i'];

/** tmux sets TERM for its panes; `env` sets ours back (and execs bash, which keeps the pane's pid). */
function shellArgs(options: ShellProcessOptions): string[] {
  return ['env', `TERM=${options.env.TERM ?? 'dumb'}`, ...BASH_ARGS];
}
const COLUMNS = 250;
const ROWS = 50;

/** The backend the image allows: tmux where it is installed, else script. */
export function availablePtyBackend(): PtyBackend | null {
  if (hasProgram('tmux')) return 'tmux';
  return hasProgram('script') ? 'script' : null;
}

export function startShellProcess(backend: PtyBackend, options: ShellProcessOptions): Promise<ShellProcess> {
  return backend === 'tmux' ? startTmux(options) : startScript(options);
}

type Child = ChildProcessByStdio<Writable, Readable, null>;

function spawnChild(program: string, args: string[], options: ShellProcessOptions): Promise<Child> {
  const child = spawn(program, args, {
    ...spawnAsAgent(options.agentUser, options.env),
    cwd: options.cwd,
    // A session of its own: the terminal's processes are nothing of the agent-server's.
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      child.off('error', reject);
      // A write after the program died fails with EPIPE; its exit reports the death.
      child.stdin.on('error', () => {});
      resolve(child);
    });
  });
}

function exitOf(child: Child): Promise<number | null> {
  return new Promise((resolve) => child.once('close', (code, signal) => resolve(signal === null ? code : null)));
}

/** Enter is CR, as a keyboard sends it (the terminal turns it into a newline for canonical reads). */
function keystrokes(text: string): Buffer {
  return Buffer.from(text.replaceAll('\n', '\r'), 'utf8');
}

async function startScript(options: ShellProcessOptions): Promise<ShellProcess> {
  const command = `exec ${shellArgs(options).join(' ')}`;
  const child = await spawnChild('script', ['-q', '-f', '-e', '-c', command, '/dev/null'], options);
  child.stdout.setEncoding('utf8');
  const exited = exitOf(child);
  return {
    backend: 'script',
    type: (text) => child.stdin.write(keystrokes(text)),
    control: (letter) => child.stdin.write(String.fromCharCode(letter.toLowerCase().charCodeAt(0) - 96)),
    onOutput: (listener) => child.stdout.on('data', listener),
    exited,
    async kill() {
      if (child.pid !== undefined) await killProcessTree(child.pid);
      await exited;
    },
  };
}

/** Bytes per send-keys command: a control-mode command is one line. */
const KEYS_PER_COMMAND = 512;

async function startTmux(options: ShellProcessOptions): Promise<ShellProcess> {
  // A socket of its own (under /tmp/tmux-<uid>/, made by tmux for the agent user): no other tmux is touched.
  const socket = `oh-${randomBytes(6).toString('hex')}`;
  const args = ['-L', socket, '-f', '/dev/null', '-C', 'new-session', '-P', '-F', '#{pane_pid}', '-x', String(COLUMNS), '-y', String(ROWS)];
  const child = await spawnChild('tmux', [...args, '-s', 'oh', '-c', options.cwd, ...shellArgs(options)], options);
  const listeners: ((text: string) => void)[] = [];
  let panePid: number | undefined;
  let block: string[] | null = null;
  let pending = '';
  const panePidKnown = new Promise<void>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('%output ')) {
          const text = decodeOutput(line.slice(line.indexOf(' ', 8) + 1));
          for (const listener of listeners) listener(text);
        } else if (line.startsWith('%begin ')) {
          block = [];
        } else if (line.startsWith('%end ') || line.startsWith('%error ')) {
          // The first command's answer is new-session's: the pane's pid (-P -F).
          if (panePid === undefined && block?.[0] !== undefined) {
            panePid = Number(block[0]);
            resolve();
          }
          block = null;
        } else if (block !== null) {
          block.push(line);
        }
      }
    });
    child.once('close', () => resolve());
  });
  // The control client's exit code is not the shell's, which tmux does not report.
  const exited = exitOf(child).then(() => null);
  await panePidKnown;
  const command = (line: string) => child.stdin.write(`${line}\n`);
  return {
    backend: 'tmux',
    type(text) {
      const bytes = keystrokes(text);
      for (let at = 0; at < bytes.length; at += KEYS_PER_COMMAND) {
        const hex = [...bytes.subarray(at, at + KEYS_PER_COMMAND)].map((byte) => byte.toString(16).padStart(2, '0'));
        command(`send-keys -t oh -H ${hex.join(' ')}`);
      }
    },
    control: (letter) => command(`send-keys -t oh C-${letter.toLowerCase()}`),
    onOutput: (listener) => listeners.push(listener),
    exited,
    async kill() {
      if (panePid !== undefined) await killProcessTree(panePid);
      command('kill-server');
      child.stdin.end();
      const gone = await Promise.race([exited.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 2_000))]);
      if (!gone && child.pid !== undefined) await killProcessTree(child.pid);
      await exited;
    },
  };
}

/** tmux writes bytes below 32 and the backslash of `%output` data as `\ooo`. */
function decodeOutput(data: string): string {
  return data.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
