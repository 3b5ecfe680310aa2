import { EXIT_FAILURE, UsageError } from '../cli-error.js';
import { type Command, integerOption, stringOption } from '../command.js';
import { shellLineFor } from '../shell-line.js';
import { requireSandbox } from './sandboxes.js';

/** What `timeout(1)` exits with when it killed the command; the agent-server reports -1. */
export const EXIT_TIMED_OUT = 124;

export const execCommand: Command = {
  name: ['exec'],
  summary: "Run a command in a sandbox and exit with the command's exit code",
  usage: '<sandbox> [--cwd <dir>] [--timeout <seconds>] -- <command>...',
  details: [
    'Several words after -- are the argv of the command, passed exactly (quotes and spaces kept); one',
    'word alone is a command line run by bash -c in the sandbox:',
    "  sandboxctl exec sb1 -- ls -la /workspace     sandboxctl exec sb1 -- 'make test && echo ok'",
    "  sandboxctl exec sb1 -- sh -c 'echo \"a  b\"; exit 7'",
    "The command's stdout and stderr are printed to sandboxctl's own. It exits with the command's exit",
    `code (${EXIT_TIMED_OUT} when it was killed at its timeout). With --json the whole BashOutput is printed instead.`,
  ].join('\n'),
  options: {
    cwd: { type: 'string', value: '<dir>', help: "Working directory (default: the sandbox's workspace)" },
    timeout: { type: 'string', value: '<seconds>', help: 'Kill the command after this long (default 300)' },
  },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  async run(ctx, args) {
    const [sandboxId, ...words] = args.positionals as [string, ...string[]];
    if (words.length === 0) throw new UsageError('no command to run: put it after --, e.g. sandboxctl exec sb1 -- ls -la');
    await requireSandbox(ctx.client, sandboxId);
    const output = await ctx.client.sandboxes.agent(sandboxId).executeBashCommand({
      command: words.length === 1 ? (words[0] as string) : shellLineFor(words),
      cwd: stringOption(args, 'cwd'),
      timeout: integerOption(args, 'timeout', { min: 1 }),
    });
    if (ctx.json) {
      ctx.out.json(output);
    } else {
      if (output.stdout) ctx.out.stdout.write(output.stdout);
      if (output.stderr) ctx.out.stderr.write(output.stderr);
    }
    if (output.exit_code === -1) return EXIT_TIMED_OUT;
    return output.exit_code ?? EXIT_FAILURE;
  },
};
