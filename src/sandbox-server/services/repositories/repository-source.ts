/**
 * Where an app conversation's `selected_repository` is cloned from, and with which credentials:
 *
 * - a URL (`https://git.example.com/team/app.git`, any self-hosted server) is used as given, less
 *   any `user:token@` in it, which becomes the credentials instead;
 * - `owner/name` is looked up on `git_provider`'s public host (github by default).
 *
 * The token comes from the conversation's secrets, by the provider's name (`GITHUB_TOKEN`,
 * `GITLAB_TOKEN`, `BITBUCKET_TOKEN`, `GIT_TOKEN` for a plain URL, with `GIT_USERNAME` when the
 * server wants a particular user). It stays a secret of the conversation: the agent's shell has it,
 * and a credential helper in the clone reads it from there, so it is never written to a file.
 */
import { validationError } from '../../../errors/index.js';
import type { Secrets } from '../../../contracts/agent-server/secrets.js';

export interface RepositorySource {
  /** The URL cloned, never with credentials in it. */
  url: string;
  /** The folder it is cloned into, under the workspace. */
  directory: string;
  branch: string | null;
  credentials: { username: string; password: string } | null;
  /** The secret holding the password, which the clone's credential helper reads; null when none. */
  tokenSecret: string | null;
  /** The username the credential helper answers. */
  username: string;
}

interface Provider {
  host: string;
  tokenSecret: string;
  /** The user a token is presented as over HTTPS. */
  username: string;
}

const PROVIDERS: Record<string, Provider> = {
  github: { host: 'github.com', tokenSecret: 'GITHUB_TOKEN', username: 'x-access-token' },
  gitlab: { host: 'gitlab.com', tokenSecret: 'GITLAB_TOKEN', username: 'oauth2' },
  bitbucket: { host: 'bitbucket.org', tokenSecret: 'BITBUCKET_TOKEN', username: 'x-token-auth' },
};
const PLAIN = { tokenSecret: 'GIT_TOKEN', usernameSecret: 'GIT_USERNAME', username: 'git' };

export function repositorySource(request: { selected_repository: string; selected_branch?: string | null; git_provider?: string | null }, secrets: Secrets): RepositorySource {
  const repository = request.selected_repository.trim();
  const branch = request.selected_branch?.trim() || null;
  if (branch !== null && (branch.startsWith('-') || /[\s\0~^:?*[\\]/.test(branch))) {
    throw validationError('body', ['selected_branch'], 'Not a branch name git accepts', 'value_error');
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repository)) return plainSource(repository, branch, secrets);
  const provider = PROVIDERS[(request.git_provider ?? 'github').toLowerCase()];
  if (!provider) {
    throw validationError('body', ['git_provider'], `Unknown git provider; use ${Object.keys(PROVIDERS).join(', ')}, or a full URL in selected_repository`, 'value_error');
  }
  if (!/^[\w.-]+(\/[\w.-]+)+$/.test(repository) || repository.split('/').some((part) => part === '.' || part === '..')) {
    throw validationError('body', ['selected_repository'], 'Expected owner/name or a git URL', 'value_error');
  }
  const token = staticValue(secrets[provider.tokenSecret]);
  return {
    url: `https://${provider.host}/${repository.replace(/\.git$/, '')}.git`,
    directory: directoryOf(repository),
    branch,
    credentials: token ? { username: provider.username, password: token } : null,
    tokenSecret: token ? provider.tokenSecret : null,
    username: provider.username,
  };
}

function plainSource(repository: string, branch: string | null, secrets: Secrets): RepositorySource {
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw validationError('body', ['selected_repository'], 'Not a valid URL', 'value_error');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw validationError('body', ['selected_repository'], 'Only http and https repository URLs are cloned', 'value_error');
  }
  const inlineUser = decodeURIComponent(url.username);
  const inlinePassword = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const token = inlinePassword || staticValue(secrets[PLAIN.tokenSecret]);
  const username = inlineUser || staticValue(secrets[PLAIN.usernameSecret]) || PLAIN.username;
  return {
    url: url.toString(),
    directory: directoryOf(url.pathname),
    branch,
    credentials: token ? { username, password: token } : null,
    // A token given in the URL is no secret of the conversation: the clone keeps no way to it.
    tokenSecret: token && !inlinePassword ? PLAIN.tokenSecret : null,
    username,
  };
}

/** The repository's own name: `team/app.git` -> `app`. */
function directoryOf(path: string): string {
  const name = path.replace(/\/+$/, '').split('/').pop()?.replace(/\.git$/, '') ?? '';
  return /^[\w.-]+$/.test(name) && name !== '.' && name !== '..' ? name : 'repository';
}

/** A secret's value when it is held here (a plain string or a StaticSecret). */
function staticValue(secret: Secrets[string] | undefined): string | null {
  if (typeof secret === 'string') return secret || null;
  if (secret?.kind === 'StaticSecret') return secret.value || null;
  return null;
}
