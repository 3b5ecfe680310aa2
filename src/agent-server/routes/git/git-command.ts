/**
 * Runs git for the /api/git routes: read-only commands (diff, ls-files, show, rev-parse), no shell,
 * bounded output. A directory that is not in a repository is reported as such, not as a failure.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { UnavailableError } from '../../../errors/index.js';

/** A repository's whole file list or one file's content may be large; past this the call fails. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export type GitResult = { ok: true; stdout: string } | { ok: false; stderr: string };

export function git(cwd: string, args: readonly string[]): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile('git', [...args], { cwd, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (!error) return resolve({ ok: true, stdout });
      const code = (error as NodeJS.ErrnoException).code;
      // execFile reports a missing working directory as ENOENT too: that is the caller's path, not git.
      if (code === 'ENOENT' && !stderr && !existsSync(cwd)) return resolve({ ok: false, stderr: `No such directory: ${cwd}` });
      if (code === 'ENOENT' && !stderr) return reject(new UnavailableError('git is not installed on this agent-server'));
      resolve({ ok: false, stderr: stderr || error.message });
    });
  });
}

/** The top of the repository holding `dir`, or undefined when it is in none (or does not exist). */
export async function repositoryRoot(dir: string): Promise<string | undefined> {
  const found = await git(dir, ['rev-parse', '--show-toplevel']).catch((error: unknown) => {
    if (error instanceof UnavailableError) throw error;
    return { ok: false as const, stderr: '' };
  });
  return found.ok ? found.stdout.trim() : undefined;
}

/** Git's empty tree: what a repository without commits is compared with. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** `ref` when given, else HEAD, else (no commit yet) the empty tree. */
export async function baseRef(root: string, ref: string | undefined): Promise<string> {
  if (ref !== undefined) return ref;
  const head = await git(root, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  return head.ok ? 'HEAD' : EMPTY_TREE;
}
