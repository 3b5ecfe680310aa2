import type { Command, OptionSpec } from './command.js';
import { formatFields } from './format.js';

export const PROGRAM = 'sandboxctl';
export const DEFAULT_URL = 'http://127.0.0.1:3000';

/** Options every command takes. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string', value: '<url>', help: `sandbox-server to talk to. Env SANDBOX_SERVER_URL. Default ${DEFAULT_URL}` },
  'api-key': { type: 'string', value: '<key>', help: 'API key (sent as a Bearer token). Env SANDBOX_SERVER_API_KEY' },
  json: { type: 'boolean', help: 'Print JSON for scripts instead of tables' },
  help: { type: 'boolean', short: 'h', help: 'Show help' },
};

const EXIT_CODES = 'Exit codes: 0 ok, 1 failure (the message says what to fix), 2 wrong usage; exec exits with the command\'s code.';

function optionLines(options: Record<string, OptionSpec>): string {
  return formatFields(
    Object.entries(options).map(([name, option]) => {
      const flagText = `${option.short ? `-${option.short}, ` : '    '}--${name}${option.value ? ` ${option.value}` : ''}`;
      return [`  ${flagText}`, option.help] as const;
    }),
  );
}

export function commandHelp(command: Command): string {
  const sections = [
    `Usage: ${PROGRAM} ${command.name.join(' ')}${command.usage ? ` ${command.usage}` : ''}`,
    command.summary + '.',
  ];
  if (command.details) sections.push(command.details);
  if (command.options && Object.keys(command.options).length > 0) sections.push(`Options:\n${optionLines(command.options)}`);
  sections.push(`Global options:\n${optionLines(GLOBAL_OPTIONS)}`);
  return `${sections.join('\n\n')}\n`;
}

/** The help of `sandboxctl` (every command) or of a group such as `sandboxctl sandboxes`. */
export function listHelp(commands: readonly Command[], group?: string): string {
  const shown = group === undefined ? commands : commands.filter((command) => command.name[0] === group);
  const usage = group === undefined ? `${PROGRAM} <command> [options]` : `${PROGRAM} ${group} <command> [options]`;
  const list = formatFields(shown.map((command) => [`  ${command.name.join(' ')}`, command.summary] as const));
  return [
    `Usage: ${usage}`,
    'Operates a sandbox-server: sandbox specs, sandboxes, commands and files in them, conversations.',
    `Commands:\n${list}`,
    `Global options:\n${optionLines(GLOBAL_OPTIONS)}`,
    `Run "${PROGRAM} <command> --help" for a command's options. ${EXIT_CODES}`,
  ].join('\n\n') + '\n';
}
