import { iteratePages, type SandboxInfo, type SandboxServerClient } from '../../client/index.js';
import { AGENT_SERVER_PORT_NAME } from '../../contracts/sandbox.js';
import { CliError, EXIT_OK } from '../cli-error.js';
import { collect } from '../collect.js';
import { type Command, type CommandContext, flag, integerOption, type ParsedArgs, stringOption } from '../command.js';
import { formatFields, formatTable, formatTime, orDash } from '../format.js';
import { noSandbox, orNotFound } from '../not-found.js';
import { Progress } from '../progress.js';
import { waitFor } from '../wait.js';

const DEFAULT_WAIT_SECONDS = 300;

const waitOptions = {
  wait: { type: 'boolean', help: 'Wait until the sandbox is RUNNING, showing progress on stderr' },
  timeout: { type: 'string', value: '<seconds>', help: `How long --wait waits (default ${DEFAULT_WAIT_SECONDS})` },
} as const;

/** The sandbox, or a CliError naming the id when there is none. */
export async function requireSandbox(client: SandboxServerClient, id: string): Promise<SandboxInfo> {
  const [sandbox] = await client.sandboxes.batchGet([id]);
  if (!sandbox) throw new CliError(noSandbox(id));
  return sandbox;
}

function agentUrl(sandbox: SandboxInfo): string | undefined {
  return sandbox.exposed_urls?.find((exposed) => exposed.name === AGENT_SERVER_PORT_NAME)?.url;
}

function printSandbox(ctx: CommandContext, sandbox: SandboxInfo): void {
  if (ctx.json) return ctx.out.json(sandbox);
  ctx.out.line(
    formatFields([
      ['id', sandbox.id],
      ['status', sandbox.status],
      ['spec', sandbox.sandbox_spec_id],
      ['created', formatTime(sandbox.created_at)],
      ...(sandbox.exposed_urls ?? []).map((exposed) => [`url ${exposed.name}`, exposed.url] as const),
    ]),
  );
}

/** Waits until the sandbox is RUNNING; ERROR and MISSING fail at once, anything else waits. */
async function waitUntilRunning(ctx: CommandContext, sandbox: SandboxInfo, args: ParsedArgs): Promise<SandboxInfo> {
  const timeoutSeconds = integerOption(args, 'timeout', { min: 1 }) ?? DEFAULT_WAIT_SECONDS;
  const progress = new Progress(ctx.out.stderr);
  const running = await waitFor({
    progress,
    timeoutMs: timeoutSeconds * 1000,
    initial: sandbox,
    read: () => requireSandbox(ctx.client, sandbox.id),
    state: (current) => (current.status === 'RUNNING' ? 'done' : current.status === 'ERROR' || current.status === 'MISSING' ? 'failed' : 'pending'),
    describe: (current) => `sandbox ${current.id}: ${current.status}`,
    failure: (current) => `sandbox ${current.id} is ${current.status}: see the sandbox-server log, then remove it with "sandboxctl sandboxes rm ${current.id}"`,
    timeout: (current, elapsed) =>
      `sandbox ${current.id} is still ${current.status} after ${elapsed}: wait longer with --timeout, or check the sandbox-server log`,
  });
  progress.finish(`sandbox ${running.id} is RUNNING`);
  return running;
}

const ls: Command = {
  name: ['sandboxes', 'ls'],
  summary: 'List sandboxes, newest first',
  usage: '[--status <status>] [--limit <n>]',
  options: {
    status: { type: 'string', value: '<status>', help: 'Only STARTING, RUNNING, PAUSED, ERROR or MISSING ones' },
    limit: { type: 'string', value: '<n>', help: 'At most this many (default: all)' },
  },
  positionals: { min: 0, max: 0 },
  async run(ctx, args) {
    const status = stringOption(args, 'status') as SandboxInfo['status'] | undefined;
    const limit = integerOption(args, 'limit', { min: 1 });
    const sandboxes = await collect(
      iteratePages((pageId) => ctx.client.sandboxes.search({ page_id: pageId, status, limit: Math.min(limit ?? 100, 100) })),
      limit,
    );
    if (ctx.json) {
      ctx.out.json(sandboxes);
      return EXIT_OK;
    }
    ctx.out.line(
      formatTable(
        ['ID', 'STATUS', 'SPEC', 'AGENT URL', 'CREATED'],
        sandboxes.map((s) => [s.id, s.status, s.sandbox_spec_id, orDash(agentUrl(s)), formatTime(s.created_at)]),
      ),
    );
    return EXIT_OK;
  },
};

const show: Command = {
  name: ['sandboxes', 'show'],
  summary: 'Show one sandbox',
  usage: '<sandbox>',
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    printSandbox(ctx, await requireSandbox(ctx.client, args.positionals[0]!));
    return EXIT_OK;
  },
};

const start: Command = {
  name: ['sandboxes', 'start'],
  summary: 'Start a new sandbox',
  usage: '[--spec <spec>] [--wait [--timeout <seconds>]]',
  details: 'Answers at once with the sandbox STARTING; with --wait it returns once the sandbox is RUNNING (exit 1 on ERROR, MISSING or timeout).',
  options: {
    spec: { type: 'string', value: '<spec>', help: 'Sandbox spec id (default: the default spec)' },
    ...waitOptions,
  },
  positionals: { min: 0, max: 0 },
  async run(ctx, args) {
    const specId = stringOption(args, 'spec');
    let sandbox = await ctx.client.sandboxes.start(specId === undefined ? {} : { sandbox_spec_id: specId });
    if (flag(args, 'wait')) sandbox = await waitUntilRunning(ctx, sandbox, args);
    printSandbox(ctx, sandbox);
    return EXIT_OK;
  },
};

function lifecycleCommand(verb: 'pause' | 'resume' | 'rm', summary: string, done: string): Command {
  const canWait = verb === 'resume';
  return {
    name: ['sandboxes', verb],
    summary,
    usage: canWait ? '<sandbox> [--wait [--timeout <seconds>]]' : '<sandbox>',
    options: canWait ? waitOptions : {},
    positionals: { min: 1, max: 1 },
    async run(ctx, args) {
      const id = args.positionals[0]!;
      const call = verb === 'pause' ? ctx.client.sandboxes.pause(id) : verb === 'resume' ? ctx.client.sandboxes.resume(id) : ctx.client.sandboxes.delete(id);
      const answer = await orNotFound(call, noSandbox(id));
      if (canWait && flag(args, 'wait')) {
        const running = await waitUntilRunning(ctx, await requireSandbox(ctx.client, id), args);
        printSandbox(ctx, running);
        return EXIT_OK;
      }
      if (ctx.json) ctx.out.json(answer);
      else ctx.out.line(`${done} sandbox ${id}`);
      return EXIT_OK;
    },
  };
}

export const sandboxCommands: Command[] = [
  ls,
  show,
  start,
  lifecycleCommand('pause', 'Pause a sandbox (its container is frozen, its data kept)', 'Pausing'),
  lifecycleCommand('resume', 'Resume a paused sandbox', 'Resuming'),
  lifecycleCommand('rm', 'Delete a sandbox and its data', 'Deleting'),
];
