import type { SnapshotInfo } from '../../client/index.js';
import { EXIT_OK } from '../cli-error.js';
import { collectPages } from '../collect.js';
import { type Command, type CommandContext, flag, integerOption, stringOption } from '../command.js';
import { formatBytes, formatFields, formatTable, formatTime, orDash } from '../format.js';
import { noSandbox, noSnapshot, orNotFound } from '../not-found.js';
import { printSandbox, waitOptions, waitUntilRunning } from './sandboxes.js';

function printSnapshot(ctx: CommandContext, snapshot: SnapshotInfo): void {
  if (ctx.json) return ctx.out.json(snapshot);
  ctx.out.line(
    formatFields([
      ['id', snapshot.id],
      ['name', orDash(snapshot.name)],
      ['sandbox', snapshot.sandbox_id],
      ['spec', snapshot.sandbox_spec_id],
      ['size', formatBytes(snapshot.size_bytes)],
      ['created', formatTime(snapshot.created_at)],
    ]),
  );
}

const nameOption = { name: { type: 'string', value: '<name>', help: 'A name for the snapshot' } } as const;

const snapshot: Command = {
  name: ['snapshot'],
  summary: "Snapshot a sandbox's files and data",
  usage: '<sandbox> [--name <name>]',
  details:
    'A RUNNING sandbox is paused for the instant of the snapshot and then runs on; a PAUSED one stays paused. Start a sandbox from it with "sandboxctl sandboxes start --snapshot <id>".',
  options: nameOption,
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const id = args.positionals[0]!;
    printSnapshot(ctx, await orNotFound(ctx.client.sandboxes.snapshot(id, stringOption(args, 'name')), noSandbox(id)));
    return EXIT_OK;
  },
};

const fork: Command = {
  name: ['fork'],
  summary: 'Start a copy of a sandbox: a snapshot, then a new sandbox from it',
  usage: '<sandbox> [--name <name>] [--wait [--timeout <seconds>]]',
  details: 'The new sandbox has the same files, conversations and event ids, and its own id and session key. The snapshot stays, listed by "sandboxctl snapshots ls".',
  options: { ...nameOption, ...waitOptions },
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const id = args.positionals[0]!;
    let sandbox = await orNotFound(ctx.client.sandboxes.fork(id, stringOption(args, 'name')), noSandbox(id));
    if (flag(args, 'wait')) sandbox = await waitUntilRunning(ctx, sandbox, args);
    printSandbox(ctx, sandbox);
    return EXIT_OK;
  },
};

const ls: Command = {
  name: ['snapshots', 'ls'],
  summary: 'List snapshots, newest first',
  usage: '[--sandbox <sandbox>] [--limit <n>]',
  options: {
    sandbox: { type: 'string', value: '<sandbox>', help: 'Only snapshots of this sandbox' },
    limit: { type: 'string', value: '<n>', help: 'At most this many (default: all)' },
  },
  positionals: { min: 0, max: 0 },
  async run(ctx, args) {
    const sandboxId = stringOption(args, 'sandbox');
    const limit = integerOption(args, 'limit', { min: 1 });
    const snapshots = await collectPages((page) => ctx.client.snapshots.search({ ...page, sandbox_id: sandboxId }), limit);
    if (ctx.json) {
      ctx.out.json(snapshots);
      return EXIT_OK;
    }
    ctx.out.line(
      formatTable(
        ['ID', 'NAME', 'SANDBOX', 'SIZE', 'CREATED'],
        snapshots.map((s) => [s.id, orDash(s.name), s.sandbox_id, formatBytes(s.size_bytes), formatTime(s.created_at)]),
      ),
    );
    return EXIT_OK;
  },
};

const rm: Command = {
  name: ['snapshots', 'rm'],
  summary: 'Delete a snapshot (refused while a sandbox started from it exists)',
  usage: '<snapshot>',
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const id = args.positionals[0]!;
    const answer = await orNotFound(ctx.client.snapshots.delete(id), noSnapshot(id));
    if (ctx.json) ctx.out.json(answer);
    else ctx.out.line(`Deleted snapshot ${id}`);
    return EXIT_OK;
  },
};

export const snapshotCommands: Command[] = [snapshot, fork, ls, rm];
