/**
 * `read_file` (gemini-style ReadFileTool): a text file's lines, numbered, a page at a time. Paths
 * may be relative to the workspace. Files with NUL bytes or over 10 MiB are refused, not mangled.
 */
import { z } from 'zod';
import { ReadFileActionSchema, ReadFileObservationSchema } from '../../../../events/index.js';
import { splitLines } from '../file-editor/text-lines.js';
import { defineTool, textContent, type Tool } from '../tool.js';
import { agentPath, describeFileError, type FileToolOptions, MAX_TEXT_FILE_BYTES, statOrNull, workspaceNote } from './file-tool-support.js';

type ReadFileAction = z.output<typeof ReadFileActionSchema>;
type ReadFileObservation = z.output<typeof ReadFileObservationSchema>;

/** Lines one read shows when it names no limit. */
export const MAX_LINES_PER_READ = 1000;

const DESCRIPTION = `Read a text file and return its lines, numbered.

A large file is read a page at a time: the answer says when it was cut and how to read on with \`offset\` and \`limit\`.

Examples:
- Read a whole file: read_file(file_path="/path/to/file.py")
- Read 50 lines from line 101: read_file(file_path="/path/to/file.py", offset=100, limit=50)`;

export function createReadFileTool({ files, workspaceDir }: FileToolOptions): Tool<ReadFileAction, ReadFileObservation> {
  async function read(action: ReadFileAction): Promise<ReadFileObservation> {
    const fail = (text: string, filePath = action.file_path) =>
      ReadFileObservationSchema.parse({ kind: 'ReadFileObservation', file_path: filePath, is_error: true, content: [textContent(text)] });
    const file = agentPath(workspaceDir, action.file_path);
    try {
      const stats = await statOrNull(files, file);
      if (stats === null) return fail(`Error: File not found: ${file}`, file);
      if (stats.isDirectory()) return fail(`Error: Path is a directory, not a file: ${file}. Use list_directory for it.`, file);
      const bytes = await files.readFile(file, { maxBytes: MAX_TEXT_FILE_BYTES });
      if (bytes.includes(0)) return fail(`Error: File is not a text file (it contains NUL bytes): ${file}`, file);
      return page(file, splitLines(bytes.toString('utf8')), action);
    } catch (error) {
      return fail(`Error: ${describeFileError(error, file)}`, file);
    }
  }

  function page(file: string, lines: string[], action: ReadFileAction): ReadFileObservation {
    const total = lines.length;
    const start = action.offset ?? 0;
    if (start > 0 && start >= total) {
      return ReadFileObservationSchema.parse({
        kind: 'ReadFileObservation',
        file_path: file,
        is_error: true,
        total_lines: total,
        content: [textContent(`Error: Offset ${start} is beyond the end of the file (${total} lines).`)],
      });
    }
    const limit = action.limit ?? MAX_LINES_PER_READ;
    const end = Math.min(start + limit, total);
    const numbered = lines.slice(start, end).map((line, i) => `${String(start + i + 1).padStart(6)}  ${line}`).join('\n');
    const truncated = start > 0 || end < total;
    const header = truncated
      ? `Read file: ${file} (showing lines ${start + 1}-${end} of ${total}).` +
        (end < total ? ` To read more, use: read_file(file_path='${action.file_path}', offset=${end}, limit=${limit})` : '')
      : `Read file: ${file} (${total} lines)`;
    return ReadFileObservationSchema.parse({
      kind: 'ReadFileObservation',
      file_path: file,
      file_content: numbered,
      is_truncated: truncated,
      lines_shown: truncated ? [start + 1, end] : null,
      total_lines: total,
      content: [textContent(`${header}\n\n${numbered}`)],
    });
  }

  return defineTool({
    name: 'read_file',
    kind: 'ReadFileTool',
    description: `${DESCRIPTION}\n\n${workspaceNote(workspaceDir)}`,
    actionSchema: ReadFileActionSchema,
    parameterDescriptions: {
      file_path: 'The file to read: an absolute path, or one relative to the workspace.',
      offset: 'The 0-based line to start reading at (for paging through a large file).',
      limit: `The most lines to read (default ${MAX_LINES_PER_READ}).`,
    },
    observationKind: 'ReadFileObservation',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    execute: read,
  });
}
