/**
 * Copies a clone made on the control plane into the sandbox's workspace, through its agent-server:
 * the tree as a tar, uploaded in pieces under the request size limit, then unpacked by a command
 * that runs as the agent, so every file is the agent's and nothing lands where the agent could not
 * write itself. A destination that already holds a repository (a start task carried on after a
 * restart, a sandbox reused) is kept as it is.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { UpstreamError } from '../../../errors/index.js';
import type { AgentClient } from '../../agent-client.js';

/** Under the agent-server's 64 MiB request limit, with room for the form around it. */
const PIECE_BYTES = 48 * 1024 * 1024;
const UNPACK_TIMEOUT_SECONDS = 600;

export async function copyIntoSandbox(client: AgentClient, clone: { folder: string; tree: string }, destination: string): Promise<string[]> {
  const archive = join(clone.folder, 'tree.tar');
  await run('tar', ['-c', '-f', archive, '-C', clone.tree, '.']);
  const staging = `/tmp/.sandbox-server-repository-${randomBytes(6).toString('hex')}`;
  const pieces = await uploadPieces(client, archive, staging);
  const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  const command = [
    `if [ -d ${quoted(`${destination}/.git`)} ]; then echo "${destination} already holds a repository: kept as it is";`,
    `else mkdir -p ${quoted(destination)} && cat ${quoted(staging)}/* | tar -x -f - -C ${quoted(destination)} && echo "copied into ${destination}"; fi;`,
    `status=$?; rm -rf ${quoted(staging)}; exit $status`,
  ].join(' ');
  const output = await client.executeBash({ command, cwd: '/', timeout: UNPACK_TIMEOUT_SECONDS });
  const printed = `${output.stdout ?? ''}${output.stderr ?? ''}`.trim();
  if (output.exit_code !== 0) throw new UpstreamError(`Copying the repository into the sandbox failed (exit ${output.exit_code}): ${printed.slice(-500)}`);
  return [`${pieces} piece(s) uploaded`, ...printed.split('\n')];
}

async function uploadPieces(client: AgentClient, archive: string, staging: string): Promise<number> {
  const file = await open(archive, 'r');
  try {
    const { size } = await file.stat();
    let index = 0;
    for (let offset = 0; offset < size || index === 0; offset += PIECE_BYTES, index++) {
      const buffer = Buffer.alloc(Math.min(PIECE_BYTES, size - offset));
      await file.read(buffer, 0, buffer.length, offset);
      await client.uploadFile(`${staging}/${String(index).padStart(6, '0')}`, buffer);
    }
    return index;
  } finally {
    await file.close();
  }
}

function run(program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.once('error', (error) => reject(new UpstreamError(`${program} could not run: ${error.message}`)));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new UpstreamError(`${program} failed: ${errors.trim().slice(-500)}`))));
  });
}
