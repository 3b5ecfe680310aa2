/**
 * Clones a repository on the control plane's side, into a temporary folder, ready to be copied into
 * a sandbox (which may not reach the git server: sandboxes never reach the host or private
 * networks). Credentials reach git only through GIT_ASKPASS, from this process's memory: the
 * remote URL and .git/config never hold them, and no system or user git configuration is read.
 * The clone is given a git identity and a credential helper that reads the token from the agent's
 * environment by the secret's name, so that the agent can fetch and push with it.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError, UpstreamError } from '../../../errors/index.js';
import { hideInLogs } from '../../../logger.js';
import type { RepositorySource } from './repository-source.js';

/** What the agent's commits are signed with, as OpenHands sets it. */
export const GIT_IDENTITY = { name: 'openhands', email: 'openhands@all-hands.dev' };

const CLONE_TIMEOUT_MS = 10 * 60_000;
/** Lines of git's output kept for the start task's log. */
const OUTPUT_LINES = 40;

export interface Clone {
  /** The temporary folder holding `tree/` (the working tree); remove it when done. */
  folder: string;
  tree: string;
  log: string[];
  hasSetupScript: boolean;
}

export async function cloneRepository(source: RepositorySource, signal: AbortSignal): Promise<Clone> {
  if (source.credentials) hideInLogs(source.credentials.password);
  const folder = await mkdtemp(join(tmpdir(), 'sandbox-server-clone-'));
  try {
    const askPass = join(folder, 'askpass.sh');
    await writeFile(askPass, '#!/bin/sh\ncase "$1" in\n  Username*) printf "%s\\n" "$CLONE_USERNAME" ;;\n  *) printf "%s\\n" "$CLONE_PASSWORD" ;;\nesac\n');
    await chmod(askPass, 0o700);
    const tree = join(folder, 'tree');
    const env = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: folder,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: askPass,
      CLONE_USERNAME: source.credentials?.username ?? source.username,
      CLONE_PASSWORD: source.credentials?.password ?? '',
    };
    const branch = source.branch ? ['--branch', source.branch] : [];
    // The clone's own settings are written by the clone itself (--config); the `-c` before it, read
    // after the repository's configuration, empties the helpers for the clone, which asks GIT_ASKPASS.
    const settings = cloneSettings(source).flatMap(([key, value]) => ['--config', `${key}=${value}`]);
    const cloned = await git(['-c', 'credential.helper=', 'clone', '--progress', ...settings, ...branch, '--', source.url, tree], { env, signal });
    if (cloned.code !== 0) throw cloneFailure(source, cloned.output);
    const log = [`$ git clone ${source.branch ? `--branch ${source.branch} ` : ''}${source.url}`, ...lastLines(cloned.output)];
    log.push(`git identity: ${GIT_IDENTITY.name} <${GIT_IDENTITY.email}>`);
    const hasSetupScript = await stat(join(tree, '.openhands', 'setup.sh')).then((s) => s.isFile(), () => false);
    return { folder, tree, log: log.map((line) => hidden(line, source)), hasSetupScript };
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

/** The clone's own configuration: an identity, and the token read from the agent's environment by name. */
function cloneSettings(source: RepositorySource): [string, string][] {
  const settings: [string, string][] = [
    ['user.name', GIT_IDENTITY.name],
    ['user.email', GIT_IDENTITY.email],
  ];
  if (source.tokenSecret) {
    const helper = `!f() { test "$1" = get && printf 'username=%s\\npassword=%s\\n' '${source.username}' "$${source.tokenSecret}"; }; f`;
    settings.push(['credential.helper', helper]);
  }
  return settings;
}

/** Why the clone failed, in words a user can act on; the token never in them. */
function cloneFailure(source: RepositorySource, output: string): Error {
  const text = hidden(output, source);
  const tail = lastLines(text).slice(-5).join(' / ');
  if (/Remote branch .* not found|couldn't find remote ref/i.test(text)) {
    return new NotFoundError(`Branch ${source.branch} not found in ${source.url}`);
  }
  if (/Authentication failed|could not read (Username|Password)|HTTP 40[13]|returned error: 40[13]|Invalid username or password/i.test(text)) {
    const hint = source.credentials ? 'the token was refused' : 'no token was given (set it as a secret of the conversation)';
    return new UpstreamError(`Authentication failed for ${source.url}: ${hint}. git said: ${tail}`);
  }
  if (/not found|HTTP 404|returned error: 404/i.test(text)) return new NotFoundError(`Repository ${source.url} not found: ${tail}`);
  if (/Could not resolve host|Failed to connect|Connection refused|timed out|unable to access/i.test(text)) {
    return new UpstreamError(`Cannot reach ${source.url}: ${tail}`);
  }
  return new UpstreamError(`Cloning ${source.url} failed: ${tail}`);
}

function hidden(text: string, source: RepositorySource): string {
  const token = source.credentials?.password;
  return token ? text.replaceAll(token, '<secret_hidden>') : text;
}

function lastLines(output: string): string[] {
  // Progress lines end in carriage returns: keep each line's last state.
  return output
    .split('\n')
    .map((line) => line.split('\r').filter((part) => part.trim() !== '').pop() ?? '')
    .filter((line) => line.trim() !== '')
    .slice(-OUTPUT_LINES);
}

export function git(args: string[], options: { env: NodeJS.ProcessEnv; signal: AbortSignal; cwd?: string }): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      env: options.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(CLONE_TIMEOUT_MS)]),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', (error) => reject(new UpstreamError(`git could not run: ${error.message}`)));
    child.once('close', (code) => resolve({ code: code ?? -1, output }));
  });
}
