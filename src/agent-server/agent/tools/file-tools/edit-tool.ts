/**
 * `edit` (gemini-style EditTool): replaces `old_string` with `new_string` exactly
 * `expected_replacements` times, or creates a file when `old_string` is empty.
 */
import { z } from 'zod';
import { EditActionSchema, EditObservationSchema } from '../../../../events/index.js';
import { isErrno } from '../../../agent-fs/index.js';
import { createSerialQueue } from '../serial-queue.js';
import { defineTool, textContent, type Tool } from '../tool.js';
import { agentPath, describeFileError, type FileToolOptions, MAX_TEXT_FILE_BYTES, statOrNull, workspaceNote } from './file-tool-support.js';

type EditAction = z.output<typeof EditActionSchema>;
type EditObservation = z.output<typeof EditObservationSchema>;

const DESCRIPTION = `Replace text in a file.

* \`old_string\` must match the file exactly, whitespace and indentation included; include 3 to 5 lines of context to make it unique.
* By default exactly one occurrence must exist; set \`expected_replacements\` to replace several. The edit fails, changing nothing, when the count differs.
* An empty \`old_string\` creates a new file holding \`new_string\` (it fails if the file exists).
* Read the file first (read_file) to copy the exact text. For rewriting most of a file, use write_file.`;

/** An agent mistake, reported as an error observation. */
class EditError extends Error {}

export function createEditTool({ files, workspaceDir }: FileToolOptions): Tool<EditAction, EditObservation> {
  const serially = createSerialQueue();

  async function run(action: EditAction, file: string): Promise<EditObservation> {
    if (action.old_string === '') {
      await files.writeFile(file, action.new_string, { exclusive: true, makeParents: true }).catch((error: unknown) => {
        if (isErrno(error, 'EEXIST')) {
          throw new EditError(`Cannot create a file that already exists: ${file}. Use write_file to replace it, or give a non-empty old_string.`);
        }
        throw error;
      });
      return observation(file, { is_new_file: true, replacements_made: 1, new_content: action.new_string }, `Created new file: ${file}`);
    }
    if (action.old_string === action.new_string) throw new EditError('No changes to apply: old_string and new_string are identical.');
    const stats = await statOrNull(files, file);
    if (stats === null) throw new EditError(`File not found: ${file}. To create a file, use an empty old_string.`);
    const bytes = await files.readFile(file, { maxBytes: MAX_TEXT_FILE_BYTES });
    if (bytes.includes(0)) throw new EditError(`The file ${file} is not a text file (it contains NUL bytes).`);
    const before = bytes.toString('utf8');
    const found = before.split(action.old_string).length - 1;
    if (found === 0) throw new EditError(`Could not find the string to replace: 0 occurrences in ${file}. Use read_file to check the exact text.`);
    if (found !== action.expected_replacements) {
      const word = action.expected_replacements === 1 ? 'occurrence' : 'occurrences';
      throw new EditError(`Expected ${action.expected_replacements} ${word} but found ${found} in ${file}; nothing was changed.`);
    }
    const after = before.split(action.old_string).join(action.new_string);
    await files.writeFile(file, after);
    return observation(
      file,
      { replacements_made: found, old_content: before, new_content: after },
      `Successfully edited ${file} (${found} replacement${found === 1 ? '' : 's'})`,
    );
  }

  async function edit(action: EditAction): Promise<EditObservation> {
    const file = agentPath(workspaceDir, action.file_path);
    try {
      return await run(action, file);
    } catch (error) {
      if (error instanceof EditError) return errorObservation(`Error: ${error.message}`, file);
      return errorObservation(`Error: ${describeFileError(error, file)}`, file);
    }
  }

  return defineTool({
    name: 'edit',
    kind: 'EditTool',
    description: `${DESCRIPTION}\n\n${workspaceNote(workspaceDir)}`,
    actionSchema: EditActionSchema,
    parameterDescriptions: {
      file_path: 'The file to change: an absolute path, or one relative to the workspace.',
      old_string: 'The exact text to replace; empty to create a new file.',
      new_string: 'The text to put in its place.',
      expected_replacements: 'How many occurrences to replace (default 1); the edit fails if the file holds a different number.',
    },
    observationKind: 'EditObservation',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    execute: (action) => serially(() => edit(action)),
  });
}

function observation(file: string, fields: Partial<EditObservation>, text: string): EditObservation {
  return EditObservationSchema.parse({ kind: 'EditObservation', file_path: file, ...fields, content: [textContent(text)] });
}

function errorObservation(text: string, file: string): EditObservation {
  return EditObservationSchema.parse({ kind: 'EditObservation', file_path: file, is_error: true, content: [textContent(text)] });
}
