/**
 * The `file_editor` tool: view, create and edit text files in the workspace, with undo. Text is
 * read and written as UTF-8; binary and very large files are refused rather than mangled.
 */
import type { AgentUser } from '../../../agent-user.js';
import path from 'node:path';
import { type AgentFs, createAgentFs, isErrno, OutsideError } from '../../../agent-fs/index.js';
import { FileEditorActionSchema, FileEditorObservationSchema, FileEditorToolSchema } from '../../../../events/index.js';
import { createSerialQueue } from '../serial-queue.js';
import {
  actionParameters,
  parseActionArguments,
  textContent,
  type FileEditorAction,
  type FileEditorObservation,
  type Tool,
} from '../tool.js';
import { listDirectory } from './directory-listing.js';
import { EditHistory } from './edit-history.js';
import { insertLines, numberLines, occurrenceLines, splitLines } from './text-lines.js';

export interface FileEditorToolOptions {
  /** The only directory tree the editor may touch. */
  workspaceDir: string;
  /** Who runs the agent's commands: the editor reads and writes with its rights, and what it makes is its. */
  agentUser?: AgentUser;
}

/** Characters of file text or listing one `view` shows before it asks for a view_range. */
const VIEW_BUDGET = 16_000;
/** Larger files are refused: they do not fit an LLM's context anyway. */
const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Lines shown around an edit. */
const SNIPPET_CONTEXT = 4;

type Command = FileEditorAction['command'];

/** An agent mistake: becomes an error observation, not an exception. */
class EditorError extends Error {}

export function createFileEditorTool(options: FileEditorToolOptions): Tool<FileEditorAction, FileEditorObservation> {
  const { workspaceDir } = options;
  const files = createAgentFs({ user: options.agentUser, within: workspaceDir });
  const history = new EditHistory();
  const serially = createSerialQueue();
  const description = describe(workspaceDir);
  const editor: Editor = { files, history, workspaceDir };

  async function run(action: FileEditorAction): Promise<FileEditorObservation> {
    if (!path.isAbsolute(action.path)) throw new EditorError(await notAbsolute(editor, action.path));
    const file = path.resolve(action.path);
    if (action.command === 'create') return create(editor, file, action);
    const stats = await files.stat(file).catch((error: unknown) => {
      if (isErrno(error, 'ENOENT', 'ENOTDIR')) throw new EditorError(`The path ${file} does not exist.`);
      throw error;
    });
    if (stats.isDirectory()) {
      if (action.command !== 'view') {
        throw new EditorError(`The path ${file} is a directory; only \`view\` works on directories.`);
      }
      if (action.view_range !== null) {
        throw new EditorError('view_range only applies to files, and the path is a directory.');
      }
      return observation(action.command, file, await listDirectory(files, file, VIEW_BUDGET));
    }
    if (!stats.isFile()) throw new EditorError(`The path ${file} is not a regular file.`);
    if (stats.size > MAX_FILE_BYTES) {
      throw new EditorError(
        `The file ${file} is too large (${stats.size} bytes; at most ${MAX_FILE_BYTES}). ` +
          'Use the terminal (head, grep, sed) instead.',
      );
    }
    switch (action.command) {
      case 'view':
        return view(editor, file, action.view_range);
      case 'str_replace':
        return strReplace(editor, file, action);
      case 'insert':
        return insert(editor, file, action);
      case 'undo_edit':
        return undo(editor, file);
    }
  }

  async function execute(action: FileEditorAction): Promise<FileEditorObservation> {
    try {
      return await run(action);
    } catch (error) {
      if (error instanceof EditorError) return errorObservation(action, error.message);
      if (error instanceof OutsideError) {
        return errorObservation(
          action,
          `The path ${action.path} is outside the workspace ${workspaceDir}; the file editor only works inside it.`,
        );
      }
      if (isErrno(error)) {
        return errorObservation(action, `Could not ${action.command} ${action.path}: ${error.message}`);
      }
      throw error;
    }
  }

  return {
    name: 'file_editor',
    description,
    parameters: actionParameters(FileEditorActionSchema, {
      command: 'The command to run: `view`, `create`, `str_replace`, `insert` or `undo_edit`.',
      path: `Absolute path to a file or directory inside ${workspaceDir}.`,
      file_text: 'Required for `create`: the content of the new file.',
      old_str: 'Required for `str_replace`: the exact text to replace; it must occur exactly once in the file.',
      new_str:
        'For `str_replace`: the replacement (empty or absent deletes old_str). ' +
        'Required for `insert`: the text to insert.',
      insert_line: 'Required for `insert`: `new_str` is inserted after this line (0 inserts at the top).',
      view_range:
        'Optional for `view` of a file: [start, end] line numbers, 1-based and inclusive; ' +
        '[start, -1] shows from start to the end.',
    }),
    actionKind: 'FileEditorAction',
    observationKind: 'FileEditorObservation',
    definition: FileEditorToolSchema.parse({
      kind: 'FileEditorTool',
      title: 'file_editor',
      description,
      action_type: 'FileEditorAction',
      observation_type: 'FileEditorObservation',
      annotations: {
        title: 'file_editor',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    }),
    parseArguments: (args) => parseActionArguments('file_editor', FileEditorActionSchema, args),
    execute: (action) => serially(() => execute(action)),
    close: async () => {},
  };
}

/** What the editor's commands work with. */
interface Editor {
  files: AgentFs;
  history: EditHistory;
  workspaceDir: string;
}

async function create(editor: Editor, file: string, action: FileEditorAction): Promise<FileEditorObservation> {
  const text = required(action, 'file_text');
  await editor.files.writeFile(file, text, { exclusive: true, makeParents: true }).catch((error: unknown) => {
    if (isErrno(error, 'EEXIST')) {
      throw new EditorError(
        `A file already exists at ${file}; \`create\` never overwrites. Edit it with str_replace or insert.`,
      );
    }
    throw error;
  });
  editor.history.record(file, null);
  return observation('create', file, `File created successfully at: ${file}`, {
    prev_exist: false,
    new_content: text,
  });
}

async function view(editor: Editor, file: string, range: number[] | null): Promise<FileEditorObservation> {
  const lines = splitLines(await readText(editor.files, file));
  let [first, last] = [1, lines.length];
  let note = '';
  if (range !== null) {
    const [start, end] = range;
    if (range.length !== 2 || start === undefined || end === undefined) {
      throw new EditorError(
        'view_range must be two line numbers, [start, end]; use -1 as end for the end of the file.',
      );
    }
    if (start < 1 || start > lines.length) {
      throw new EditorError(`view_range starts at line ${start}, but the file has ${lines.length} lines.`);
    }
    if (end !== -1 && end < start) throw new EditorError(`view_range ends at ${end}, before its start ${start}.`);
    [first, last] = [start, end === -1 ? lines.length : Math.min(end, lines.length)];
    if (end > lines.length) note = `NOTE: the file has only ${lines.length} lines, so the view stops there.\n`;
  }
  const shown = numberLines(lines, first, last, VIEW_BUDGET);
  const more =
    shown.lastLine < last
      ? `\n[Lines ${shown.lastLine + 1} to ${last} are not shown, to keep this short. Use view_range to see them.]`
      : '';
  const header = `${note}Here's the result of running \`cat -n\` on ${file}:`;
  return observation('view', file, `${header}\n${shown.text}${more}`);
}

async function strReplace(editor: Editor, file: string, action: FileEditorAction): Promise<FileEditorObservation> {
  const oldStr = required(action, 'old_str');
  const newStr = action.new_str ?? '';
  if (oldStr === '') throw new EditorError('old_str is empty; it must be the exact text to replace.');
  if (newStr === oldStr) throw new EditorError('No replacement was performed: new_str is the same as old_str.');
  const before = await readText(editor.files, file);
  const found = occurrenceLines(before, oldStr);
  if (found.length === 0) {
    throw new EditorError(
      `No replacement was performed: old_str was not found in ${file}. It must match the file exactly, ` +
        'including whitespace and indentation.',
    );
  }
  if (found.length > 1) {
    throw new EditorError(
      `No replacement was performed: old_str occurs ${found.length} times in ${file} (at lines ` +
        `${found.join(', ')}), and it must occur exactly once. Include more surrounding lines to make it unique.`,
    );
  }
  const at = before.indexOf(oldStr);
  const after = before.slice(0, at) + newStr + before.slice(at + oldStr.length);
  await editor.files.writeFile(file, after);
  editor.history.record(file, before);
  const line = found[0] ?? 1;
  const snippet = snippetOf(after, line - SNIPPET_CONTEXT, line + SNIPPET_CONTEXT + newStr.split('\n').length - 1);
  return observation(
    'str_replace',
    file,
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of it:\n${snippet}\n` +
      'Review the changes and make sure they are as expected. Edit the file again if necessary.',
    { old_content: before, new_content: after },
  );
}

async function insert(editor: Editor, file: string, action: FileEditorAction): Promise<FileEditorObservation> {
  const line = required(action, 'insert_line');
  const newStr = required(action, 'new_str');
  const before = await readText(editor.files, file);
  const count = splitLines(before).length;
  if (line > count) {
    throw new EditorError(
      `insert_line ${line} is out of range: the file has ${count} lines, so it must be 0 to ${count}.`,
    );
  }
  const after = insertLines(before, line, newStr);
  await editor.files.writeFile(file, after);
  editor.history.record(file, before);
  const snippet = snippetOf(after, line + 1 - SNIPPET_CONTEXT, line + newStr.split('\n').length + SNIPPET_CONTEXT);
  return observation(
    'insert',
    file,
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of it:\n${snippet}\n` +
      'Review the changes and make sure they are as expected (indentation, no duplicated lines). ' +
      'Edit the file again if necessary.',
    { old_content: before, new_content: after },
  );
}

async function undo(editor: Editor, file: string): Promise<FileEditorObservation> {
  const current = await readText(editor.files, file);
  const previous = editor.history.pop(file);
  if (previous === undefined) throw new EditorError(`No edit of ${file} to undo.`);
  if (previous === null) {
    await editor.files.removeFile(file);
    const removed = `Last edit to ${file} undone: that edit created the file, so it has been removed.`;
    return observation('undo_edit', file, removed, { old_content: current });
  }
  await editor.files.writeFile(file, previous);
  const lines = splitLines(previous);
  const shown = numberLines(lines, 1, lines.length, VIEW_BUDGET);
  return observation(
    'undo_edit',
    file,
    `Last edit to ${file} undone successfully. Here's the result of running \`cat -n\` on ${file}:\n${shown.text}`,
    { old_content: current, new_content: previous },
  );
}

async function notAbsolute(editor: Editor, requested: string): Promise<string> {
  const suggestion = path.join(editor.workspaceDir, requested);
  const exists = await editor.files.stat(suggestion).then(() => true, () => false);
  const hint = exists ? ` Did you mean ${suggestion}?` : '';
  return `The path ${requested} is not absolute: it must start with \`/\`.${hint}`;
}

function describe(workspaceDir: string): string {
  return `View, create and edit plain-text files.

* \`view\` of a file shows it numbered like \`cat -n\` (use \`view_range\` for part of a long file); \`view\` of a directory lists its non-hidden entries two levels deep.
* \`create\` makes a new file (and missing parent directories); it never overwrites an existing file.
* \`str_replace\` replaces \`old_str\` with \`new_str\`. \`old_str\` must match the file exactly, whitespace and indentation included, and occur exactly once: include enough surrounding lines to make it unique.
* \`insert\` inserts \`new_str\` as whole lines after line \`insert_line\` (0 = top of the file).
* \`undo_edit\` reverts the last edit of the file at \`path\` (for a file made by \`create\`, removes it).
* Paths must be absolute and inside the workspace, ${workspaceDir}. Start exploring there rather than at /.
* View a file before editing it. When making several edits to one file, send them as parallel calls in one message.`;
}

async function readText(files: AgentFs, file: string): Promise<string> {
  const bytes = await files.readFile(file, { maxBytes: MAX_FILE_BYTES });
  if (bytes.includes(0)) {
    throw new EditorError(`The file ${file} looks binary (it contains NUL bytes); the file editor only handles text.`);
  }
  return bytes.toString('utf8');
}

/** Lines `first`..`last` of `text`, clamped to the file, numbered. */
function snippetOf(text: string, first: number, last: number): string {
  const lines = splitLines(text);
  return numberLines(lines, Math.max(1, first), Math.min(lines.length, last), VIEW_BUDGET).text;
}

function required<K extends 'file_text' | 'old_str' | 'new_str' | 'insert_line'>(
  action: FileEditorAction,
  name: K,
): NonNullable<FileEditorAction[K]> {
  const value = action[name];
  if (value === null || value === undefined) {
    throw new EditorError(`Parameter \`${name}\` is required for command \`${action.command}\`.`);
  }
  return value as NonNullable<FileEditorAction[K]>;
}

function observation(
  command: Command,
  file: string,
  text: string,
  fields: { prev_exist?: boolean; old_content?: string; new_content?: string } = {},
): FileEditorObservation {
  return FileEditorObservationSchema.parse({
    kind: 'FileEditorObservation',
    command,
    path: file,
    content: [textContent(text)],
    ...fields,
  });
}

function errorObservation(action: FileEditorAction, message: string): FileEditorObservation {
  return FileEditorObservationSchema.parse({
    kind: 'FileEditorObservation',
    command: action.command,
    path: action.path,
    content: [textContent(message)],
    is_error: true,
  });
}
