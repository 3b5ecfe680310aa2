/**
 * `list_directory` (gemini-style ListDirectoryTool): a directory's entries with size and modification
 * time, directories first; `recursive` goes two levels deep. At most 500 entries.
 */
import path from 'node:path';
import { z } from 'zod';
import { ListDirectoryActionSchema, ListDirectoryObservationSchema, type FileEntry } from '../../../../events/index.js';
import type { DirEntry } from '../../../agent-fs/index.js';
import { defineTool, textContent, type Tool } from '../tool.js';
import { agentPath, describeFileError, type FileToolOptions, statOrNull, workspaceNote } from './file-tool-support.js';

type ListDirectoryAction = z.output<typeof ListDirectoryActionSchema>;
type ListDirectoryObservation = z.output<typeof ListDirectoryObservationSchema>;

export const MAX_ENTRIES = 500;
/** Levels `recursive` lists: the directory's entries and those of its subdirectories. */
const RECURSIVE_DEPTH = 2;

const DESCRIPTION = `List the files and subdirectories of a directory, with sizes and modification times.

Set \`recursive\` to also list the contents of its subdirectories (two levels in all). At most ${MAX_ENTRIES} entries are returned; to find files by name pattern use glob, to find them by content use grep.`;

export function createListDirectoryTool({ files, workspaceDir }: FileToolOptions): Tool<ListDirectoryAction, ListDirectoryObservation> {
  /** An entry with its size and time (a link's target's); null when it vanished or cannot be looked at. */
  async function described(dir: string, entry: DirEntry): Promise<FileEntry | null> {
    const entryPath = path.join(dir, entry.name);
    const stats = await files.stat(entryPath).catch(() => null);
    if (stats === null) return null;
    return {
      name: entry.name,
      path: entryPath,
      is_directory: stats.isDirectory(),
      size: stats.isDirectory() ? 0 : stats.size,
      modified_time: stats.mtime.toISOString(),
    };
  }

  async function collect(dir: string, depth: number, into: FileEntry[]): Promise<void> {
    const entries = sortEntries((await Promise.all((await files.readDir(dir)).map((entry) => described(dir, entry)))).filter((e) => e !== null));
    const subdirectories: string[] = [];
    for (const entry of entries) {
      if (into.length >= MAX_ENTRIES) return;
      into.push(entry);
      if (entry.is_directory) subdirectories.push(entry.path);
    }
    if (depth + 1 >= RECURSIVE_DEPTH) return;
    for (const subdirectory of subdirectories) {
      // A subdirectory the agent may not read is shown without its contents rather than failing the listing.
      await collect(subdirectory, depth + 1, into).catch(() => undefined);
    }
  }

  async function list(action: ListDirectoryAction): Promise<ListDirectoryObservation> {
    const fail = (text: string, dirPath: string) =>
      ListDirectoryObservationSchema.parse({ kind: 'ListDirectoryObservation', dir_path: dirPath, is_error: true, content: [textContent(text)] });
    const dir = agentPath(workspaceDir, action.dir_path);
    try {
      const stats = await statOrNull(files, dir);
      if (stats === null) return fail(`Error: Directory not found: ${dir}`, dir);
      if (!stats.isDirectory()) return fail(`Error: Path is not a directory: ${dir}`, dir);
      const entries: FileEntry[] = [];
      await collect(dir, action.recursive ? 0 : RECURSIVE_DEPTH - 1, entries);
      const truncated = entries.length >= MAX_ENTRIES;
      const header = `Listed directory: ${dir} (${entries.length} entries${truncated ? `, truncated to ${MAX_ENTRIES}` : ''})`;
      const lines = entries.map((entry) => describeEntry(dir, entry));
      return ListDirectoryObservationSchema.parse({
        kind: 'ListDirectoryObservation',
        dir_path: dir,
        entries,
        total_count: entries.length,
        is_truncated: truncated,
        content: [textContent(lines.length === 0 ? `${header}\n(empty directory)` : `${header}\n${lines.join('\n')}`)],
      });
    } catch (error) {
      return fail(`Error: ${describeFileError(error, dir)}`, dir);
    }
  }

  return defineTool({
    name: 'list_directory',
    kind: 'ListDirectoryTool',
    description: `${DESCRIPTION}\n\n${workspaceNote(workspaceDir)}`,
    actionSchema: ListDirectoryActionSchema,
    parameterDescriptions: {
      dir_path: 'The directory to list: an absolute path, or one relative to the workspace (default: the workspace).',
      recursive: 'If true, also list the contents of subdirectories (two levels in all).',
    },
    observationKind: 'ListDirectoryObservation',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    execute: list,
  });
}

/** Directories first, then by name. */
function sortEntries(entries: FileEntry[]): FileEntry[] {
  const rank = (entry: FileEntry) => (entry.is_directory ? 0 : 1);
  return [...entries].sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function describeEntry(root: string, entry: FileEntry): string {
  const relative = path.relative(root, entry.path);
  const modified = entry.modified_time.slice(0, 16).replace('T', ' ');
  return entry.is_directory ? `${relative}/  (directory, modified ${modified})` : `${relative}  (${entry.size} bytes, modified ${modified})`;
}
