import { randomBytes } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { CliError, EXIT_OK, UsageError } from '../cli-error.js';
import type { Command, CommandContext } from '../command.js';
import { orNotFound } from '../not-found.js';
import { requireSandbox } from './sandboxes.js';

export interface RemoteLocation {
  sandboxId: string;
  path: string;
}

/**
 * `<sandbox>:<absolute path>` names a file in a sandbox, anything else a local file, as in scp and
 * docker cp. A local name with a colon is written with a directory in front (`./a:b`).
 */
export function parseLocation(argument: string): RemoteLocation | { local: string } {
  const match = /^([A-Za-z0-9][A-Za-z0-9_-]*):(.*)$/.exec(argument);
  if (!match) return { local: argument };
  const [, sandboxId, path] = match as unknown as [string, string, string];
  if (!path.startsWith('/')) throw new UsageError(`the path in the sandbox must be absolute, e.g. ${sandboxId}:/workspace/file.txt`);
  return { sandboxId, path };
}

function isRemote(location: RemoteLocation | { local: string }): location is RemoteLocation {
  return 'sandboxId' in location;
}

function report(ctx: CommandContext, source: string, destination: string, bytes: number): void {
  if (ctx.json) ctx.out.json({ source, destination, bytes });
  else ctx.out.line(`Copied ${bytes} bytes to ${destination}`);
}

async function upload(ctx: CommandContext, local: string, remote: RemoteLocation): Promise<void> {
  const found = await stat(local).catch(() => undefined);
  if (!found) throw new CliError(`no such file: ${local}`);
  if (!found.isFile()) throw new CliError(`${local} is not a file: cp copies one file at a time`);
  await requireSandbox(ctx.client, remote.sandboxId);
  const path = remote.path.endsWith('/') ? posix.join(remote.path, basename(local)) : remote.path;
  await ctx.client.sandboxes.agent(remote.sandboxId).uploadFile(path, await openAsBlob(local));
  report(ctx, local, `${remote.sandboxId}:${path}`, found.size);
}

async function download(ctx: CommandContext, remote: RemoteLocation, local: string): Promise<void> {
  await requireSandbox(ctx.client, remote.sandboxId);
  const intoDirectory = local.endsWith('/') || (await stat(local).catch(() => undefined))?.isDirectory();
  const target = intoDirectory ? join(local, posix.basename(remote.path)) : local;
  const source = `${remote.sandboxId}:${remote.path}`;
  const body = await orNotFound(
    ctx.client.sandboxes.agent(remote.sandboxId).downloadFile(remote.path),
    `no file ${remote.path} in sandbox ${remote.sandboxId}`,
  );
  // Written beside the target and renamed, so a failed copy never leaves half a file behind.
  const temporary = join(dirname(target), `.${basename(target)}.sandboxctl-${randomBytes(4).toString('hex')}`);
  let bytes = 0;
  const counted = Readable.fromWeb(body as NodeReadableStream<Uint8Array>).on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  try {
    await pipeline(counted, createWriteStream(temporary, { flags: 'wx' }));
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'ENOTDIR') {
      throw new CliError(`cannot write ${target}: ${(error as Error).message}`);
    }
    throw error;
  }
  report(ctx, source, target, bytes);
}

export const cpCommand: Command = {
  name: ['cp'],
  summary: 'Copy a file into or out of a sandbox',
  usage: '<source> <destination>',
  details: [
    'One side is <sandbox>:<absolute path>, the other a local path:',
    '  sandboxctl cp ./report.txt sb1:/workspace/report.txt    (a destination ending in / keeps the name)',
    '  sandboxctl cp sb1:/workspace/out.log ./                 (into a directory keeps the name)',
  ].join('\n'),
  positionals: { min: 2, max: 2 },
  async run(ctx, args) {
    const [from, to] = args.positionals as [string, string];
    const source = parseLocation(from);
    const destination = parseLocation(to);
    if (!isRemote(source) && isRemote(destination)) await upload(ctx, source.local, destination);
    else if (isRemote(source) && !isRemote(destination)) await download(ctx, source, destination.local);
    else throw new UsageError('exactly one of source and destination must be <sandbox>:<absolute path>');
    return EXIT_OK;
  },
};
