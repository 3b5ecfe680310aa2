/**
 * `glob` and `grep` (OpenHands' GlobTool and GrepTool): find files by name pattern or by content,
 * the most recently modified first, at most 100. The backend is ripgrep where the image has it,
 * else find and grep (see file-search.ts); the searches run as the agent user.
 */
import path from 'node:path';
import { z } from 'zod';
import { GlobActionSchema, GlobObservationSchema, GrepActionSchema, GrepObservationSchema } from '../../../../events/index.js';
import type { AgentUser } from '../../../agent-user.js';
import { defineTool, textContent, type Tool } from '../tool.js';
import { globFiles, grepFiles, MAX_RESULTS, type SearchBackend, type SearchContext } from './file-search.js';
import { hasProgram } from './run-search.js';

type GlobAction = z.output<typeof GlobActionSchema>;
type GlobObservation = z.output<typeof GlobObservationSchema>;
type GrepAction = z.output<typeof GrepActionSchema>;
type GrepObservation = z.output<typeof GrepObservationSchema>;

export interface SearchToolOptions {
  workspaceDir: string;
  agentUser?: AgentUser;
  /** Which programs search; by default ripgrep when it is on PATH, else find and grep. */
  backend?: SearchBackend;
}

const TRUNCATED_NOTE = `\n\n[Results truncated to the first ${MAX_RESULTS} files. Use a more specific pattern or path.]`;

const GLOB_DESCRIPTION = `Find files by name pattern.
* Patterns like "**/*.js", "src/**/*.ts" or "*.{json,yaml,yml}"; a pattern without "/" matches file names at any depth.
* Returns absolute paths, the most recently modified first. Hidden files and directories (and, with ripgrep, git-ignored ones) are skipped.
* Only the first ${MAX_RESULTS} results are returned; narrow the pattern or set \`path\` to see others.`;

const GREP_DESCRIPTION = `Find files whose contents match a regular expression (case-insensitive).
* Full regex syntax, e.g. "log.*Error" or "function\\s+\\w+".
* \`include\` keeps only files whose name matches a glob, e.g. "*.js" or "*.{ts,tsx}".
* Returns the paths of matching files, the most recently modified first; read them to see the matches. Hidden files are skipped.
* Only the first ${MAX_RESULTS} results are returned; narrow the pattern or set \`path\` to see others.`;

const SEARCH_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

function searchContext(options: SearchToolOptions, signal: AbortSignal | undefined): SearchContext {
  const backend = options.backend ?? (hasProgram('rg') ? 'ripgrep' : 'find');
  return { backend, agentUser: options.agentUser, cwd: options.workspaceDir, signal };
}

export function createGlobTool(options: SearchToolOptions): Tool<GlobAction, GlobObservation> {
  async function glob(action: GlobAction, signal: AbortSignal | undefined): Promise<GlobObservation> {
    const { root, pattern } = searchRoot(options.workspaceDir, action.path, action.pattern);
    const base = { kind: 'GlobObservation' as const, pattern: action.pattern, search_path: root };
    const result = await globFiles(searchContext(options, signal), root, pattern);
    if (!result.ok) return GlobObservationSchema.parse({ ...base, files: [], is_error: true, content: [textContent(result.error)] });
    const text =
      result.paths.length === 0
        ? `No files found matching pattern '${action.pattern}' in directory '${root}'`
        : `Found ${result.paths.length} file(s) matching pattern '${action.pattern}' in '${root}':\n${result.paths.join('\n')}` +
          (result.truncated ? TRUNCATED_NOTE : '');
    return GlobObservationSchema.parse({ ...base, files: result.paths, truncated: result.truncated, content: [textContent(text)] });
  }

  return defineTool({
    name: 'glob',
    kind: 'GlobTool',
    description: `${GLOB_DESCRIPTION}\n\nYour working directory is ${options.workspaceDir}; patterns are relative to it unless \`path\` is given.`,
    actionSchema: GlobActionSchema,
    parameterDescriptions: {
      pattern: 'The glob pattern to match files against, e.g. "**/*.js" or "src/**/*.ts".',
      path: 'The directory to search (absolute); the working directory when absent.',
    },
    observationKind: 'GlobObservation',
    annotations: SEARCH_ANNOTATIONS,
    execute: (action, ctx) => glob(action, ctx.signal),
  });
}

export function createGrepTool(options: SearchToolOptions): Tool<GrepAction, GrepObservation> {
  async function grep(action: GrepAction, signal: AbortSignal | undefined): Promise<GrepObservation> {
    const root = action.path === null ? options.workspaceDir : path.resolve(options.workspaceDir, action.path);
    const base = { kind: 'GrepObservation' as const, pattern: action.pattern, search_path: root, include_pattern: action.include };
    const result = await grepFiles(searchContext(options, signal), root, action.pattern, action.include);
    if (!result.ok) return GrepObservationSchema.parse({ ...base, matches: [], is_error: true, content: [textContent(result.error)] });
    const filtered = action.include === null ? '' : ` (filtered by '${action.include}')`;
    const text =
      result.paths.length === 0
        ? `No files found containing pattern '${action.pattern}' in directory '${root}'${filtered}`
        : `Found ${result.paths.length} file(s) containing pattern '${action.pattern}' in '${root}'${filtered}:\n${result.paths.join('\n')}` +
          (result.truncated ? TRUNCATED_NOTE : '');
    return GrepObservationSchema.parse({ ...base, matches: result.paths, truncated: result.truncated, content: [textContent(text)] });
  }

  return defineTool({
    name: 'grep',
    kind: 'GrepTool',
    description: `${GREP_DESCRIPTION}\n\nYour working directory is ${options.workspaceDir}; searches run there unless \`path\` is given.`,
    actionSchema: GrepActionSchema,
    parameterDescriptions: {
      pattern: 'The regular expression to search file contents for.',
      path: 'The directory to search (absolute); the working directory when absent.',
      include: 'A glob that file names must match to be searched, e.g. "*.js" or "*.{ts,tsx}".',
    },
    observationKind: 'GrepObservation',
    annotations: SEARCH_ANNOTATIONS,
    execute: (action, ctx) => grep(action, ctx.signal),
  });
}

/**
 * Where a glob searches: `path` when given; else the directory part of an absolute pattern
 * ("/src/app/**\/*.ts" searches /src/app for "**\/*.ts"), as OpenHands splits it; else the workspace.
 */
function searchRoot(workspaceDir: string, requestedPath: string | null, pattern: string): { root: string; pattern: string } {
  if (requestedPath !== null) return { root: path.resolve(workspaceDir, requestedPath), pattern };
  if (!pattern.startsWith('/')) return { root: workspaceDir, pattern };
  const parts = pattern.split('/').filter((part) => part !== '');
  const magic = parts.findIndex((part) => /[*?[{]/.test(part));
  if (magic === -1) return { root: path.dirname(pattern), pattern: path.basename(pattern) };
  return { root: `/${parts.slice(0, magic).join('/')}`, pattern: parts.slice(magic).join('/') };
}
