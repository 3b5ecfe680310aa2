import type { SandboxInfo, SandboxServerClient } from '../../client/index.js';
import { AGENT_SERVER_PORT_NAME } from '../../contracts/sandbox.js';
import { CliError, EXIT_OK, UsageError } from '../cli-error.js';
import { collectPages } from '../collect.js';
import { type Command, type CommandContext, flag, integerOption, type ParsedArgs, stringOption } from '../command.js';
import { formatElapsed, formatFields, formatTable, formatTime, oneLine, orDash } from '../format.js';
import { noSandbox, orNotFound } from '../not-found.js';
import { Progress } from '../progress.js';
import { waitFor } from '../wait.js';

const DEFAULT_WAIT_SECONDS = 300;
/** How much of a status detail `ls` shows; `show` shows all of it. */
const DETAIL_LIMIT = 80;

export const waitOptions = {
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

export function printSandbox(ctx: CommandContext, sandbox: SandboxInfo): void {
  if (ctx.json) return ctx.out.json(sandbox);
  ctx.out.line(
    formatFields([
      ['id', sandbox.id],
      ['status', sandbox.status],
      ...(sandbox.status_detail ? [['detail', sandbox.status_detail] as const] : []),
      ['spec', sandbox.sandbox_spec_id],
      ['created', formatTime(sandbox.created_at)],
      ...(sandbox.exposed_urls ?? []).map((exposed) => [`url ${exposed.name}`, exposed.url] as const),
    ]),
  );
}

/** Waits until the sandbox is RUNNING; ERROR and MISSING fail at once, anything else waits. */
export async function waitUntilRunning(ctx: CommandContext, sandbox: SandboxInfo, args: ParsedArgs): Promise<SandboxInfo> {
  const timeoutSeconds = integerOption(args, 'timeout', { min: 1 }) ?? DEFAULT_WAIT_SECONDS;
  const progress = new Progress(ctx.out.stderr);
  const running = await waitFor({
    progress,
    timeoutMs: timeoutSeconds * 1000,
    initial: sandbox,
    read: () => requireSandbox(ctx.client, sandbox.id),
    state: (current) => (current.status === 'RUNNING' ? 'done' : current.status === 'ERROR' || current.status === 'MISSING' ? 'failed' : 'pending'),
    describe: (current) => `sandbox ${current.id}: ${current.status}${current.status_detail ? ` (${current.status_detail})` : ''}`,
    failure: (current) =>
      `sandbox ${current.id} is ${current.status}: ${current.status_detail ?? 'no detail was recorded'}; ` +
      `its history: "sandboxctl events --sandbox ${current.id}"; remove it with "sandboxctl sandboxes rm ${current.id}"`,
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
    const sandboxes = await collectPages((page) => ctx.client.sandboxes.search({ ...page, status }), limit);
    if (ctx.json) {
      ctx.out.json(sandboxes);
      return EXIT_OK;
    }
    ctx.out.line(
      formatTable(
        ['ID', 'STATUS', 'SPEC', 'AGENT URL', 'CREATED', 'DETAIL'],
        sandboxes.map((s) => [s.id, s.status, s.sandbox_spec_id, orDash(agentUrl(s)), formatTime(s.created_at), orDash(s.status_detail && oneLine(s.status_detail, DETAIL_LIMIT))]),
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
  usage: '[--spec <spec>] [--snapshot <snapshot>] [--wait [--timeout <seconds>]]',
  details: 'Answers at once with the sandbox STARTING; with --wait it returns once the sandbox is RUNNING (exit 1 on ERROR, MISSING or timeout).',
  options: {
    spec: { type: 'string', value: '<spec>', help: 'Sandbox spec id (default: the default spec, or the snapshot\'s)' },
    snapshot: { type: 'string', value: '<snapshot>', help: 'Start from this snapshot: its files, conversations and events' },
    ...waitOptions,
  },
  positionals: { min: 0, max: 0 },
  async run(ctx, args) {
    const specId = stringOption(args, 'spec');
    const snapshotId = stringOption(args, 'snapshot');
    const request = { ...(specId === undefined ? {} : { sandbox_spec_id: specId }), ...(snapshotId === undefined ? {} : { snapshot_id: snapshotId }) };
    let sandbox = await ctx.client.sandboxes.start(request);
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

/** The states `sandboxes wait --for` accepts, and the event that announces each. */
const WAIT_TARGETS = { RUNNING: 'sandbox.running', PAUSED: 'sandbox.paused', deleted: 'sandbox.deleted' } as const;
type WaitTarget = keyof typeof WAIT_TARGETS;
/** While waiting to run or pause, these end the wait with a failure; a deletion ends only with sandbox.deleted. */
const FAILED_EVENTS = new Set(['sandbox.error', 'sandbox.missing', 'sandbox.deleted']);

function waitTarget(value: string | undefined): WaitTarget {
  if (value === undefined) throw new UsageError('--for is required: RUNNING, PAUSED or deleted');
  if (!Object.hasOwn(WAIT_TARGETS, value)) throw new UsageError(`--for must be RUNNING, PAUSED or deleted, not "${value}"`);
  return value as WaitTarget;
}

/**
 * Whether the sandbox is already in the target state. A deleted sandbox leaves the API as soon as
 * its deletion is asked for, so `deleted` is judged by its sandbox.deleted event (container and data
 * gone); an id with neither a sandbox nor any event is unknown.
 */
async function alreadyReached(client: SandboxServerClient, id: string, target: WaitTarget): Promise<{ reached: boolean; sandbox: SandboxInfo | null }> {
  const [sandbox] = await client.sandboxes.batchGet([id]);
  if (target !== 'deleted') {
    if (!sandbox) throw new CliError(noSandbox(id));
    if (sandbox.status === 'ERROR' || sandbox.status === 'MISSING') {
      const why = sandbox.status_detail ? ` (${sandbox.status_detail})` : '';
      throw new CliError(`sandbox ${id} is ${sandbox.status}${why}, not ${target}: see "sandboxctl events --sandbox ${id}"`);
    }
    return { reached: sandbox.status === target, sandbox };
  }
  const deleted = await client.events.search({ sandbox_id: id, type: ['sandbox.deleted'], limit: 1 });
  if (deleted.items.length > 0) return { reached: true, sandbox: null };
  if (!sandbox && (await client.events.search({ sandbox_id: id, limit: 1 })).items.length === 0) throw new CliError(noSandbox(id));
  return { reached: false, sandbox: sandbox ?? null };
}

const wait: Command = {
  name: ['sandboxes', 'wait'],
  summary: 'Wait until a sandbox is RUNNING, PAUSED or deleted',
  usage: '<sandbox> --for RUNNING|PAUSED|deleted [--timeout <seconds>]',
  details:
    'Follows the lifecycle event stream rather than polling. Exit 0 once the sandbox is in that state (at once if it already is); exit 1 when it is or goes ERROR or MISSING instead, is deleted while waiting for another state, or the timeout passes.',
  options: {
    for: { type: 'string', value: '<state>', help: 'RUNNING, PAUSED or deleted' },
    timeout: { type: 'string', value: '<seconds>', help: `How long to wait (default ${DEFAULT_WAIT_SECONDS})` },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const id = args.positionals[0]!;
    const target = waitTarget(stringOption(args, 'for'));
    const timeoutSeconds = integerOption(args, 'timeout', { min: 1 }) ?? DEFAULT_WAIT_SECONDS;
    // The stream position first, then the state: a change after the read is then in the stream.
    const after = await ctx.client.events.latestId();
    const progress = new Progress(ctx.out.stderr);
    const done = () => {
      progress.finish(`sandbox ${id} is ${target}`);
      if (ctx.json) ctx.out.json({ id, status: target });
      return EXIT_OK;
    };
    const { reached, sandbox } = await alreadyReached(ctx.client, id, target);
    if (reached) return done();
    progress.update(`sandbox ${id}: ${sandbox?.status ?? 'deleting'}, waiting for ${target}`);
    const signal = AbortSignal.timeout(timeoutSeconds * 1000);
    for await (const event of ctx.client.events.follow({ afterEventId: after, sandboxId: id, signal })) {
      if (event.type === WAIT_TARGETS[target]) return done();
      progress.update(`sandbox ${id}: ${event.status}, waiting for ${target}`);
      if (target !== 'deleted' && FAILED_EVENTS.has(event.type)) {
        progress.stop();
        const why = event.status_detail ? ` (${event.status_detail})` : '';
        throw new CliError(`sandbox ${id} became ${event.type === 'sandbox.deleted' ? 'deleted' : event.status}${why} while waiting for ${target}: see "sandboxctl events --sandbox ${id}"`);
      }
    }
    progress.stop();
    throw new CliError(`sandbox ${id} is not ${target} after ${formatElapsed(progress.elapsedMs)}: wait longer with --timeout`);
  },
};

export const sandboxCommands: Command[] = [
  ls,
  show,
  start,
  lifecycleCommand('pause', 'Pause a sandbox (its container is frozen, its data kept)', 'Pausing'),
  lifecycleCommand('resume', 'Resume a paused sandbox', 'Resuming'),
  lifecycleCommand('rm', 'Delete a sandbox and its data', 'Deleting'),
  wait,
];
