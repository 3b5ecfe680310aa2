import type { SandboxServerClient } from '../client/index.js';
import { UsageError } from './cli-error.js';
import type { Output } from './output.js';

/** One option of a command, as node:util parseArgs reads it, with its line of help. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Shown in help after the flag, e.g. `--timeout <seconds>`. */
  value?: string;
  help: string;
}

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

export interface CommandContext {
  client: SandboxServerClient;
  out: Output;
  /** --json: machine-readable output on stdout. */
  json: boolean;
}

export interface Command {
  /** The words that name it, e.g. ['sandboxes', 'ls']. */
  name: string[];
  summary: string;
  /** Everything after `sandboxctl <name>` in the usage line, e.g. `<sandbox> [--wait]`. */
  usage: string;
  /** Paragraphs printed by --help below the usage. */
  details?: string;
  options?: Record<string, OptionSpec>;
  /** How many positionals it takes: exactly min..max (max Infinity for a trailing command). */
  positionals: { min: number; max: number };
  /** Resolves to the process exit code. */
  run(ctx: CommandContext, args: ParsedArgs): Promise<number>;
}

/** The string value of an option, or undefined. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function stringsOption(args: ParsedArgs, name: string): string[] {
  const value = args.values[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** A repeatable `NAME=VALUE` option as pairs (the value may hold `=`); a UsageError when one has no name. */
export function pairsOption(args: ParsedArgs, option: string, what: string): [string, string][] {
  return stringsOption(args, option).map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--${option} takes ${what}, not "${pair}"`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  });
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

/** A whole-number option within bounds, or undefined when absent; a UsageError when malformed. */
export function integerOption(args: ParsedArgs, name: string, bounds: { min: number; max?: number }): number | undefined {
  const raw = stringOption(args, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  if (!/^\d+$/.test(raw.trim()) || value < bounds.min || value > max) {
    throw new UsageError(`--${name} must be a whole number from ${bounds.min}${bounds.max === undefined ? ' up' : ` to ${bounds.max}`}, not "${raw}"`);
  }
  return value;
}
