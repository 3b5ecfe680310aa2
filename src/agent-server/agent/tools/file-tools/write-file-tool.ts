/** `write_file` (gemini-style WriteFileTool): a whole file written at once, created with its directories if missing. */
import { z } from 'zod';
import { WriteFileActionSchema, WriteFileObservationSchema } from '../../../../events/index.js';
import { createSerialQueue } from '../serial-queue.js';
import { defineTool, textContent, type Tool } from '../tool.js';
import { agentPath, describeFileError, type FileToolOptions, MAX_TEXT_FILE_BYTES, statOrNull, workspaceNote } from './file-tool-support.js';

type WriteFileAction = z.output<typeof WriteFileActionSchema>;
type WriteFileObservation = z.output<typeof WriteFileObservationSchema>;

const DESCRIPTION = `Write a whole file: create it (and any missing parent directories), or replace what it holds.

Use it for new files and for rewriting most of a file; for a targeted change to an existing file, \`edit\` is safer.`;

export function createWriteFileTool({ files, workspaceDir }: FileToolOptions): Tool<WriteFileAction, WriteFileObservation> {
  const serially = createSerialQueue();

  async function write(action: WriteFileAction): Promise<WriteFileObservation> {
    const fail = (text: string, filePath: string | null = null) =>
      WriteFileObservationSchema.parse({ kind: 'WriteFileObservation', file_path: filePath, is_error: true, content: [textContent(text)] });
    const file = agentPath(workspaceDir, action.file_path);
    try {
      const stats = await statOrNull(files, file);
      if (stats?.isDirectory()) return fail(`Error: Path is a directory, not a file: ${file}`, file);
      // The old text is kept for clients that show a diff; a huge old file is just not shown.
      const old = stats?.isFile() && stats.size <= MAX_TEXT_FILE_BYTES ? (await files.readFile(file)).toString('utf8') : null;
      const { created } = await files.writeFile(file, action.content, { makeParents: true });
      return WriteFileObservationSchema.parse({
        kind: 'WriteFileObservation',
        file_path: file,
        is_new_file: created,
        old_content: old,
        new_content: action.content,
        content: [textContent(`${created ? 'Created' : 'Updated'} file: ${file}`)],
      });
    } catch (error) {
      return fail(`Error: ${describeFileError(error, file)}`, file);
    }
  }

  return defineTool({
    name: 'write_file',
    kind: 'WriteFileTool',
    description: `${DESCRIPTION}\n\n${workspaceNote(workspaceDir)}`,
    actionSchema: WriteFileActionSchema,
    parameterDescriptions: {
      file_path: 'The file to write: an absolute path, or one relative to the workspace.',
      content: 'The whole new content of the file.',
    },
    observationKind: 'WriteFileObservation',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    execute: (action) => serially(() => write(action)),
  });
}
