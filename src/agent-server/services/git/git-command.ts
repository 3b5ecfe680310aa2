/**
 * Runs git for the /api/git routes: read-only commands (diff, ls-files, show, rev-parse), no shell,
 * bounded output. A directory that is not in a repository is reported as such, not as a failure.
 *
 * git runs as the agent's user when there is one: the repository's configuration is the agent's to
 * write, and some of it names programs git runs (core.fsmonitor, filters, diff drivers). As the
 * agent, they get no more than the agent's own terminal has; as the agent-server's root they would
 * escape the agent's user. Running as the repository's owner also passes git's safe.directory check,
 * which refuses a repository another user owns.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type AgentUser, spawnAsAgent } from '../../agent-user.js';
import { UnavailableError } from '../../../errors/index.js';

/** A repository's whole file list or one file's content may be large; past this the call fails. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export type GitResult = { ok: true; stdout: string } | { ok: false; stderr: string };

/** Who git runs as: the agent's user, or this process's when there is none. */
export type GitUser = AgentUser | undefined;

export function git(user: GitUser, cwd: string, args: readonly string[]): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const options = { cwd, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' as const, ...spawnAsAgent(user, process.env) };
    execFile('git', [...args], options, (error, stdout, stderr) => {
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
export async function repositoryRoot(user: GitUser, dir: string): Promise<string | undefined> {
  const found = await git(user, dir, ['rev-parse', '--show-toplevel']).catch((error: unknown) => {
    if (error instanceof UnavailableError) throw error;
    return { ok: false as const, stderr: '' };
  });
  return found.ok ? found.stdout.trim() : undefined;
}

/** Git's empty tree: what a repository without commits is compared with. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** `ref` when given, else HEAD, else (no commit yet) the empty tree. */
export async function baseRef(user: GitUser, root: string, ref: string | undefined): Promise<string> {
  if (ref !== undefined) return ref;
  const head = await git(user, root, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  return head.ok ? 'HEAD' : EMPTY_TREE;
}
