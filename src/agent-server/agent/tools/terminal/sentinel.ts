/**
 * How we know where a command's output ends without a terminal: after every command line the
 * shell's PROMPT_COMMAND prints one sentinel line
 *
 *     \n<marker> <seq> <exit code> <last background pid> <working dir>\n
 *
 * The marker holds a random token, so output cannot fake it, and the shell's input never holds it
 * whole (PROMPT_COMMAND prints it from two halves), so `set -v` or `set -x` echoes cannot fake it
 * either. `seq` names the command line that set it: a sentinel from any other line (the shell's
 * start, a Ctrl+C at an idle prompt, typed-ahead input the program never read) is stale, and its
 * output belongs to no command.
 */
import { randomBytes } from 'node:crypto';

const MARKER_PREFIX = '__OH_';

export interface Sentinel {
  seq: number;
  exitCode: number;
  /** `$!`: the pid of the last command started in the background, or -1. */
  backgroundPid: number;
  workingDir: string;
}

export interface Scan {
  /** Text that is command output for sure. */
  output: string;
  /** The first complete sentinel, if one arrived. */
  sentinel: Sentinel | null;
  /** Text to scan again when more arrives (after the sentinel, or a sentinel's unfinished start). */
  rest: string;
}

export function createMarker(): string {
  return MARKER_PREFIX + randomBytes(8).toString('hex');
}

/**
 * The first line typed into a new shell: no terminal echo of the lines we type, the terminal's
 * size, no prompts, no history file, and the sentinel after each line.
 */
export function shellSetupLine(marker: string, size: { columns: number; rows: number }): string {
  const token = marker.slice(MARKER_PREFIX.length);
  const fields = `"$__oh_seq" "$__oh_rc" "\${!:--1}" "$PWD"`;
  const printSentinel = `printf '\\n%s%s %s %s %s %s\\n' ${MARKER_PREFIX} ${token} ${fields}`;
  const promptCommand = shellQuote(`__oh_rc=$?; ${printSentinel}`);
  const terminal = `stty -echo cols ${size.columns} rows ${size.rows} 2>/dev/null`;
  return `${terminal}; PS1= PS2= PS0= HISTFILE= ; __oh_seq=0; PROMPT_COMMAND=${promptCommand}\n`;
}

/**
 * A terminal in canonical mode keeps at most 4095 characters of one input line and drops the rest,
 * so a command holding a longer line is typed in pieces: quoted, a piece is at most four times
 * this long.
 */
const PIECE = 900;

/**
 * The input that runs `command` as command line `seq`. `eval` of a quoted string makes any
 * command, even a multi-line one or one with a syntax error, a single line for the shell: exactly
 * one sentinel follows it, and a syntax error is just exit code 2. A command with a long line is
 * first gathered into a variable piece by piece (each piece's sentinel is stale: it carries the
 * previous `seq`), then evaluated.
 */
export function commandLine(seq: number, command: string, exports: Record<string, string> = {}): string {
  return exportLines(exports) + evalLine(`__oh_seq=${seq}; `, '__oh_cmd', command);
}

/**
 * Lines that export the variables before the command, as their own command lines (their sentinels
 * are stale), so the command's exit code and its line numbers are its own. Values may be long or
 * hold newlines (a key file), hence typed like a long command.
 */
function exportLines(exports: Record<string, string>): string {
  const names = Object.keys(exports);
  if (names.length === 0) return '';
  const text = names.map((name) => `export ${name}=${shellQuote(exports[name] ?? '')}`).join('\n');
  return evalLine('', '__oh_env', text) + 'unset __oh_env\n';
}

function evalLine(prefix: string, variable: string, text: string): string {
  if (text.split('\n').every((line) => line.length <= PIECE)) return `${prefix}eval ${shellQuote(text)}\n`;
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += PIECE) pieces.push(`${variable}+=${shellQuote(text.slice(at, at + PIECE))}\n`);
  return `${variable}=\n${pieces.join('')}${prefix}eval "$${variable}"\n`;
}

export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export function scanForSentinel(text: string, marker: string): Scan {
  const needle = `\n${marker} `;
  const at = text.indexOf(needle);
  if (at === -1) {
    const keep = partialNeedleLength(text, needle);
    return { output: text.slice(0, text.length - keep), sentinel: null, rest: text.slice(text.length - keep) };
  }
  const end = text.indexOf('\n', at + needle.length);
  if (end === -1) return { output: text.slice(0, at), sentinel: null, rest: text.slice(at) };
  const sentinel = parseSentinelFields(text.slice(at + needle.length, end));
  if (sentinel === null) return { output: text.slice(0, end), sentinel: null, rest: text.slice(end) };
  return { output: text.slice(0, at), sentinel, rest: text.slice(end + 1) };
}

function parseSentinelFields(fields: string): Sentinel | null {
  const m = /^(\d+) (-?\d+) (-?\d+) (.*)$/.exec(fields);
  if (!m) return null;
  return { seq: Number(m[1]), exitCode: Number(m[2]), backgroundPid: Number(m[3]), workingDir: m[4] ?? '' };
}

/** Length of the longest end of `text` that could be the start of `needle`. */
function partialNeedleLength(text: string, needle: string): number {
  for (let n = Math.min(needle.length - 1, text.length); n > 0; n--) {
    if (needle.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
