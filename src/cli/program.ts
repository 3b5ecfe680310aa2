import { parseArgs } from 'node:util';
import { createSandboxServerClient } from '../client/index.js';
import { EXIT_OK, EXIT_USAGE, UsageError } from './cli-error.js';
import type { Command, OptionSpec, ParsedArgs } from './command.js';
import { convCommands } from './commands/conv.js';
import { cpCommand } from './commands/cp.js';
import { engineCommands } from './commands/engines.js';
import { settingsCommands } from './commands/settings.js';
import { eventCommands } from './commands/events.js';
import { execCommand } from './commands/exec.js';
import { policyCommands } from './commands/policy.js';
import { portCommands } from './commands/ports.js';
import { sandboxCommands } from './commands/sandboxes.js';
import { snapshotCommands } from './commands/snapshots.js';
import { specCommands } from './commands/specs.js';
import { describeError } from './describe-error.js';
import { commandHelp, DEFAULT_URL, GLOBAL_OPTIONS, listHelp, PROGRAM } from './help.js';
import { Output, type OutputStream } from './output.js';

export const COMMANDS: readonly Command[] = [
  ...specCommands,
  ...sandboxCommands,
  ...snapshotCommands,
  execCommand,
  cpCommand,
  ...portCommands,
  ...policyCommands,
  ...convCommands,
  ...eventCommands,
  ...engineCommands,
  ...settingsCommands,
];

export interface CliEnvironment {
  env: NodeJS.ProcessEnv;
  stdout: OutputStream;
  stderr: OutputStream;
}

/** Runs one sandboxctl command line; resolves to the exit code. Never throws. */
export async function runCli(argv: readonly string[], environment: CliEnvironment): Promise<number> {
  const out = new Output(environment.stdout, environment.stderr);
  const { globals, rest: words } = splitLeadingGlobals(argv);
  const first = words[0];
  if (first === 'help' || (first === undefined && (globals.includes('--help') || globals.includes('-h')))) {
    out.stdout.write(listHelp(COMMANDS));
    return EXIT_OK;
  }
  if (first === undefined) {
    out.stderr.write(listHelp(COMMANDS));
    return EXIT_USAGE;
  }
  const command = findCommand(words);
  if (!command) return groupOrUnknown(out, words);

  const rest = [...globals, ...words.slice(command.name.length)];
  let url = DEFAULT_URL;
  let apiKey: string | undefined;
  try {
    const args = parseCommandLine(command, rest);
    if (args.values.help === true) {
      out.stdout.write(commandHelp(command));
      return EXIT_OK;
    }
    url = serverUrl(args, environment.env);
    apiKey = stringValue(args, 'api-key') ?? (environment.env.SANDBOX_SERVER_API_KEY || undefined);
    const client = createSandboxServerClient({ baseUrl: url, apiKey });
    return await command.run({ client, out, json: args.values.json === true }, args);
  } catch (error) {
    const { message, exitCode } = describeError(error, { url, apiKeyGiven: apiKey !== undefined });
    const hint = exitCode === EXIT_USAGE ? ` (see ${PROGRAM} ${command.name.join(' ')} --help)` : '';
    out.note(`${PROGRAM}: ${message}${hint}`);
    return exitCode;
  }
}

/**
 * Global options may come before the command (`sandboxctl --url http://host:3000 sandboxes ls`):
 * they are set aside and parsed with the command's own options.
 */
function splitLeadingGlobals(argv: readonly string[]): { globals: string[]; rest: string[] } {
  let index = 0;
  for (let option = globalOptionOf(argv[0]); option !== undefined; option = globalOptionOf(argv[index])) {
    const token = argv[index]!;
    index += option.type === 'string' && !token.includes('=') ? 2 : 1;
  }
  return { globals: argv.slice(0, index), rest: argv.slice(index) };
}

/** The global option a token names (`--url`, `--url=x`, `-h`), if any. */
function globalOptionOf(token: string | undefined): OptionSpec | undefined {
  if (token?.startsWith('--')) {
    const name = token.slice(2).split('=')[0]!;
    return Object.hasOwn(GLOBAL_OPTIONS, name) ? GLOBAL_OPTIONS[name] : undefined;
  }
  if (token !== undefined && /^-\w$/.test(token)) return Object.values(GLOBAL_OPTIONS).find((option) => option.short === token.slice(1));
  return undefined;
}

/** The command whose name the arguments start with. */
function findCommand(argv: readonly string[]): Command | undefined {
  return COMMANDS.find((command) => command.name.every((word, index) => argv[index] === word));
}

/** `sandboxctl sandboxes` alone lists that group; anything else is unknown. */
function groupOrUnknown(out: Output, argv: readonly string[]): number {
  const [group, sub] = argv as [string, string | undefined];
  if (COMMANDS.some((command) => command.name.length > 1 && command.name[0] === group)) {
    if (sub === '--help' || sub === '-h') {
      out.stdout.write(listHelp(COMMANDS, group));
      return EXIT_OK;
    }
    const problem = sub === undefined ? `"${group}" needs a command` : `unknown command "${group} ${sub}"`;
    out.note(`${PROGRAM}: ${problem} (see ${PROGRAM} ${group} --help)`);
    return EXIT_USAGE;
  }
  out.note(`${PROGRAM}: unknown command "${group}" (see ${PROGRAM} --help)`);
  return EXIT_USAGE;
}

function parseCommandLine(command: Command, rest: readonly string[]): ParsedArgs {
  const specs: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...command.options };
  const options = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [
      name,
      { type: spec.type, ...(spec.multiple ? { multiple: true } : {}), ...(spec.short ? { short: spec.short } : {}) },
    ]),
  );
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs({ args: [...rest], options, allowPositionals: true, strict: true }) as ParsedArgs;
  } catch (error) {
    // parseArgs goes on to explain `--` at length; the first sentence says what is wrong.
    throw new UsageError((error as Error).message.split(/\. To specify|\n/)[0] ?? 'invalid arguments');
  }
  if (parsed.values.help === true) return parsed;
  const { min, max } = command.positionals;
  const count = parsed.positionals.length;
  if (count < min) throw new UsageError(`missing arguments: ${PROGRAM} ${command.name.join(' ')} ${command.usage}`);
  if (count > max) throw new UsageError(`unexpected argument "${parsed.positionals[max]}"`);
  return parsed;
}

function stringValue(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function serverUrl(args: ParsedArgs, env: NodeJS.ProcessEnv): string {
  const raw = stringValue(args, 'url') ?? (env.SANDBOX_SERVER_URL || DEFAULT_URL);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`invalid --url / SANDBOX_SERVER_URL "${raw}": expected e.g. ${DEFAULT_URL}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`invalid --url / SANDBOX_SERVER_URL "${raw}": it must start with http:// or https://`);
  }
  return raw.replace(/\/+$/, '');
}
