/**
 * The two searches behind `glob` and `grep`, each with two backends chosen by what the image has:
 * ripgrep, as OpenHands, or, without it, `find` and `grep -P`, which every glibc image has. Both
 * skip hidden files and directories and return absolute paths, the most recently modified first
 * (sorted here: ripgrep's `--sortr=modified` sorts each directory, not the whole result), at most
 * MAX_RESULTS of them. Every program runs as the agent user.
 */
import path from 'node:path';
import type { AgentUser } from '../../../agent-user.js';
import { globMatcher } from './glob-pattern.js';
import { runSearch, SEARCH_TIMEOUT_MS, type SearchOutput } from './run-search.js';

export const MAX_RESULTS = 100;

export type SearchBackend = 'ripgrep' | 'find';

export interface SearchContext {
  backend: SearchBackend;
  agentUser?: AgentUser;
  /** Where the programs run (the workspace). */
  cwd: string;
  signal?: AbortSignal;
}

export type SearchResult = { ok: true; paths: string[]; truncated: boolean } | { ok: false; error: string };

/** Files under `root` whose path matches the glob `pattern`. */
export async function globFiles(ctx: SearchContext, root: string, pattern: string): Promise<SearchResult> {
  if (ctx.backend === 'ripgrep') return ripgrep(ctx, ['--files', '-g', pattern, ...SKIP_HIDDEN, '--', root]);
  const listed = await listFiles(ctx, root);
  if (!listed.ok) return listed;
  const matches = globMatcher(pattern);
  return top(listed.files.filter((file) => matches(path.relative(root, file.path))));
}

/** Files under `root` (whose name matches `include`, when given) holding a match of the regex `pattern`, case-insensitively. */
export async function grepFiles(ctx: SearchContext, root: string, pattern: string, include: string | null): Promise<SearchResult> {
  if (ctx.backend === 'ripgrep') {
    const glob = include === null ? [] : ['-g', include];
    return ripgrep(ctx, ['-l', '-i', ...glob, ...SKIP_HIDDEN, '-e', pattern, '--', root]);
  }
  const listed = await listFiles(ctx, root);
  if (!listed.ok) return listed;
  const included = include === null ? listed.files : listed.files.filter((file) => globMatcher(include)(path.basename(file.path)));
  if (included.length === 0) return { ok: true, paths: [], truncated: false };
  const output = await search(ctx, 'xargs', ['-0', '-r', 'grep', '-l', '-I', '-i', '-P', '-Z', '-e', pattern, '--'], {
    input: included.map((file) => `${file.path}\0`).join(''),
    nulSeparated: true,
  });
  if (!output.ok) return output;
  const found = new Set(output.records);
  return top(included.filter((file) => found.has(file.path)));
}

/** The last glob wins in ripgrep: a hidden file stays skipped even when the pattern names it. */
const SKIP_HIDDEN = ['-g', '!.*'];

/** ripgrep's paths, then their modification times from `stat`, to sort them. */
async function ripgrep(ctx: SearchContext, args: string[]): Promise<SearchResult> {
  const found = await search(ctx, 'rg', ['-0', ...args], { nulSeparated: true });
  if (!found.ok) return found;
  if (found.records.length === 0) return { ok: true, paths: [], truncated: false };
  const stated = await search(ctx, 'xargs', ['-0', '-r', 'stat', '--printf', '%.9Y\\t%n\\0', '--'], {
    input: found.records.map((file) => `${file}\0`).join(''),
    nulSeparated: true,
  });
  return stated.ok ? top(stated.records.map(listedFile)) : stated;
}

interface ListedFile {
  path: string;
  mtime: number;
}

/** Every non-hidden regular file under `root`, with its modification time, from one `find`. */
async function listFiles(ctx: SearchContext, root: string): Promise<{ ok: true; files: ListedFile[] } | { ok: false; error: string }> {
  const output = await search(ctx, 'find', [root, '-mindepth', '1', '-name', '.*', '-prune', '-o', '-type', 'f', '-printf', '%T@\\t%p\\0'], {
    nulSeparated: true,
  });
  if (!output.ok) return output;
  return { ok: true, files: output.records.map(listedFile) };
}

/** A `<mtime>\t<path>` record. */
function listedFile(record: string): ListedFile {
  const tab = record.indexOf('\t');
  return { mtime: Number(record.slice(0, tab)), path: record.slice(tab + 1) };
}

/** The newest MAX_RESULTS files, newest first (ties by path, so an answer does not vary). */
function top(files: ListedFile[]): SearchResult {
  const sorted = [...files].sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { ok: true, paths: sorted.slice(0, MAX_RESULTS).map((file) => file.path), truncated: sorted.length > MAX_RESULTS };
}

/**
 * Runs a search program. It failed when it found nothing and said why on stderr (a bad regex, a
 * missing path); "nothing found" (grep's and ripgrep's exit code 1, xargs' 123) says nothing, and a
 * file that could not be read does not spoil what the rest gave.
 */
async function search(
  ctx: SearchContext,
  program: string,
  args: string[],
  options: { input?: string; nulSeparated?: boolean } = {},
): Promise<({ ok: true } & SearchOutput) | { ok: false; error: string }> {
  let output: SearchOutput;
  try {
    output = await runSearch({ program, args, cwd: ctx.cwd, agentUser: ctx.agentUser, timeoutMs: SEARCH_TIMEOUT_MS, signal: ctx.signal, ...options });
  } catch (error) {
    return { ok: false, error: `Could not run ${program}: ${(error as Error).message}` };
  }
  if (output.timedOut) return { ok: false, error: `The search took longer than ${SEARCH_TIMEOUT_MS / 1000} s and was stopped; search a narrower path.` };
  const failed = output.records.length === 0 && output.exitCode !== 0 && output.stderr !== '';
  if (failed) return { ok: false, error: output.stderr || `${program} failed with exit code ${output.exitCode}` };
  return { ok: true, ...output };
}
