/**
 * Copies a clone made on the control plane into the sandbox's workspace: `tar` of the tree streamed
 * straight into the sandbox's agent-server (POST /api/file/unpack), which unpacks it as it arrives,
 * as the agent, so every file is the agent's and nothing lands where the agent could not write
 * itself. Nothing is staged on either side. A destination that already holds something (a start
 * task carried on after a restart, a sandbox reused) is kept as it is.
 */
import { spawn } from 'node:child_process';
import { UpstreamError } from '../../../errors/index.js';
import type { AgentClient } from '../../agent-client.js';

/** Characters of tar's complaints kept for the error. */
const STDERR_CHARS = 2_000;

export async function copyIntoSandbox(client: AgentClient, tree: string, destination: string, signal: AbortSignal): Promise<string[]> {
  const tar = spawn('tar', ['-c', '-f', '-', '-C', tree, '.'], { stdio: ['ignore', 'pipe', 'pipe'], signal });
  let errors = '';
  tar.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors = (errors + chunk).slice(-STDERR_CHARS)));
  const exited = new Promise<number>((resolve, reject) => {
    tar.once('error', (error) => reject(new UpstreamError(`tar could not run: ${error.message}`)));
    tar.once('close', (code) => resolve(code ?? -1));
  });
  // tar is stopped once the agent-server answered: a taken destination is answered before the archive is read.
  const unpacked = client.unpackArchive(destination, tar.stdout, signal).finally(() => tar.kill());
  const [outcome, code] = await Promise.allSettled([unpacked, exited]);
  if (outcome.status === 'fulfilled' && outcome.value === 'taken') return [`${destination} already holds files: kept as it is`];
  // tar's own failure first: the agent-server then only saw an archive cut short.
  if (code.status === 'rejected') throw code.reason;
  if (code.value !== 0) throw new UpstreamError(`Packing the clone failed (tar exit ${code.value}): ${errors.trim().slice(-500)}`);
  if (outcome.status === 'rejected') throw outcome.reason;
  return [`copied into ${destination}`];
}
