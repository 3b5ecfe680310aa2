import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createFileEditorTool,
  type FileEditorAction,
  type FileEditorObservation,
  type Tool,
} from '../../../../../src/agent-server/agent/tools/index.js';

let workspace: string;
let outside: string;
let tool: Tool<FileEditorAction, FileEditorObservation>;

beforeEach(async () => {
  workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'file-editor-')));
  outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'file-editor-outside-')));
  tool = createFileEditorTool({ workspaceDir: workspace });
});

afterEach(async () => {
  await fs.rm(workspace, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

async function edit(args: Record<string, unknown>): Promise<FileEditorObservation> {
  const parsed = tool.parseArguments(args);
  if (!parsed.ok) throw new Error(parsed.error);
  return tool.execute(parsed.action);
}

function text(observation: FileEditorObservation): string {
  return observation.content.map((item) => ('text' in item ? item.text : '')).join('');
}

async function write(relative: string, content: string): Promise<string> {
  const file = path.join(workspace, relative);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
  return file;
}

function expectError(observation: FileEditorObservation, message: string | RegExp): void {
  expect(observation.is_error).toBe(true);
  expect(text(observation)).toMatch(message);
}

describe('file_editor view', () => {
  it('shows a file numbered like cat -n', async () => {
    const file = await write('a.txt', 'one\ntwo\nthree\n');
    const observation = await edit({ command: 'view', path: file });
    expect(observation).toMatchObject({ kind: 'FileEditorObservation', command: 'view', path: file, is_error: false });
    expect(text(observation)).toBe(`Here's the result of running \`cat -n\` on ${file}:\n     1\tone\n     2\ttwo\n     3\tthree`);
  });

  it('shows a range of lines, to the end with -1, and clamps an end past the file', async () => {
    const file = await write('a.txt', 'l1\nl2\nl3\nl4\n');
    expect(text(await edit({ command: 'view', path: file, view_range: [2, 3] }))).toMatch(/\n {5}2\tl2\n {5}3\tl3$/);
    expect(text(await edit({ command: 'view', path: file, view_range: [3, -1] }))).toMatch(/\n {5}3\tl3\n {5}4\tl4$/);
    const clamped = await edit({ command: 'view', path: file, view_range: [4, 99] });
    expect(text(clamped)).toMatch(/^NOTE: the file has only 4 lines/);
    expect(text(clamped)).toMatch(/\n {5}4\tl4$/);
  });

  it('rejects a range outside the file or the wrong way round', async () => {
    const file = await write('a.txt', 'l1\nl2\n');
    expectError(await edit({ command: 'view', path: file, view_range: [5, 6] }), /starts at line 5, but the file has 2 lines/);
    expectError(await edit({ command: 'view', path: file, view_range: [2, 1] }), /before its start/);
    expectError(await edit({ command: 'view', path: file, view_range: [1] }), /two line numbers/);
  });

  it('shows part of a long file and says how to see the rest', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line number ${i + 1}`);
    const file = await write('long.txt', `${lines.join('\n')}\n`);
    const observation = await edit({ command: 'view', path: file });
    expect(text(observation)).toMatch(/\[Lines \d+ to 5000 are not shown, to keep this short\. Use view_range/);
    expect(text(observation).length).toBeLessThan(17_000);
  });

  it('lists a directory two levels deep without hidden entries', async () => {
    await write('src/index.ts', '');
    await write('src/deep/nested.ts', '');
    await write('README.md', '');
    await write('.git/config', '');
    const observation = await edit({ command: 'view', path: workspace });
    expect(observation.is_error).toBe(false);
    const listing = text(observation).split('\n');
    expect(listing).toEqual([
      `Here are the files and directories up to 2 levels deep in ${workspace}, excluding hidden items:`,
      `${workspace}/`,
      `${workspace}/README.md`,
      `${workspace}/src/`,
      `${workspace}/src/deep/`,
      `${workspace}/src/index.ts`,
      `1 hidden files/directories in ${workspace} are not shown; \`ls -la ${workspace}\` lists them.`,
    ]);
    expectError(await edit({ command: 'view', path: workspace, view_range: [1, 2] }), /only applies to files/);
  });

  it('refuses binary files and missing paths', async () => {
    const binary = await write('blob.bin', 'abc\0def');
    expectError(await edit({ command: 'view', path: binary }), /looks binary/);
    expectError(await edit({ command: 'view', path: path.join(workspace, 'missing.txt') }), /does not exist/);
  });
});

describe('file_editor paths', () => {
  it('refuses a relative path and suggests the absolute one when it exists', async () => {
    await write('notes.txt', 'x');
    const observation = await edit({ command: 'view', path: 'notes.txt' });
    expectError(observation, /not absolute/);
    expect(text(observation)).toContain(`Did you mean ${path.join(workspace, 'notes.txt')}?`);
    expect(observation.path).toBe('notes.txt');
  });

  it('refuses paths outside the workspace, also through .. and symlinks', async () => {
    const secret = path.join(outside, 'secret.txt');
    await fs.writeFile(secret, 'secret');
    expectError(await edit({ command: 'view', path: secret }), /outside the workspace/);
    expectError(await edit({ command: 'view', path: `${workspace}/../${path.basename(outside)}/secret.txt` }), /outside the workspace/);
    await fs.symlink(outside, path.join(workspace, 'link'));
    expectError(await edit({ command: 'view', path: path.join(workspace, 'link', 'secret.txt') }), /outside the workspace/);
    expectError(
      await edit({ command: 'str_replace', path: path.join(workspace, 'link', 'secret.txt'), old_str: 'secret', new_str: 'x' }),
      /outside the workspace/,
    );
    expect(await fs.readFile(secret, 'utf8')).toBe('secret');
  });

  it('does not create a file through a symlink whose target does not exist yet', async () => {
    const target = path.join(outside, 'planted.txt');
    await fs.symlink(target, path.join(workspace, 'dangling'));
    expectError(await edit({ command: 'create', path: path.join(workspace, 'dangling'), file_text: 'x' }), /outside the workspace/);
    expect(existsSync(target)).toBe(false);
  });

  it('follows symlinks that stay inside the workspace', async () => {
    await write('real/file.txt', 'inside\n');
    await fs.symlink(path.join(workspace, 'real'), path.join(workspace, 'alias'));
    const observation = await edit({ command: 'view', path: path.join(workspace, 'alias', 'file.txt') });
    expect(observation.is_error).toBe(false);
    expect(text(observation)).toContain('1\tinside');
  });
});

describe('file_editor create', () => {
  it('creates a file and its missing directories', async () => {
    const file = path.join(workspace, 'new/dir/hello.py');
    const observation = await edit({ command: 'create', path: file, file_text: 'print("hi")\n' });
    expect(observation).toMatchObject({
      is_error: false,
      command: 'create',
      path: file,
      prev_exist: false,
      old_content: null,
      new_content: 'print("hi")\n',
    });
    expect(text(observation)).toBe(`File created successfully at: ${file}`);
    expect(await fs.readFile(file, 'utf8')).toBe('print("hi")\n');
  });

  it('never overwrites, and needs file_text', async () => {
    const file = await write('exists.txt', 'keep me');
    expectError(await edit({ command: 'create', path: file, file_text: 'new' }), /already exists/);
    expect(await fs.readFile(file, 'utf8')).toBe('keep me');
    expectError(await edit({ command: 'create', path: path.join(workspace, 'x.txt') }), /`file_text` is required/);
  });
});

describe('file_editor str_replace', () => {
  it('replaces the one occurrence and reports old and new content with a snippet', async () => {
    const file = await write('code.py', 'def f():\n    return 1\n\nprint(f())\n');
    const observation = await edit({ command: 'str_replace', path: file, old_str: 'return 1', new_str: 'return 2' });
    expect(observation).toMatchObject({
      is_error: false,
      prev_exist: true,
      old_content: 'def f():\n    return 1\n\nprint(f())\n',
      new_content: 'def f():\n    return 2\n\nprint(f())\n',
    });
    expect(text(observation)).toContain('     2\t    return 2');
    expect(await fs.readFile(file, 'utf8')).toBe('def f():\n    return 2\n\nprint(f())\n');
  });

  it('deletes old_str when new_str is absent', async () => {
    const file = await write('a.txt', 'keep DROP keep\n');
    await edit({ command: 'str_replace', path: file, old_str: ' DROP' });
    expect(await fs.readFile(file, 'utf8')).toBe('keep keep\n');
  });

  it('refuses old_str that is missing, repeated, empty or unchanged, leaving the file alone', async () => {
    const file = await write('a.txt', 'x = 1\ny = 1\nx = 1\n');
    expectError(await edit({ command: 'str_replace', path: file, old_str: 'z = 1', new_str: 'z = 2' }), /was not found/);
    expectError(
      await edit({ command: 'str_replace', path: file, old_str: 'x = 1', new_str: 'x = 2' }),
      /occurs 2 times in .* \(at lines 1, 3\)/,
    );
    expectError(await edit({ command: 'str_replace', path: file, old_str: '', new_str: 'x' }), /old_str is empty/);
    expectError(await edit({ command: 'str_replace', path: file, old_str: 'y = 1', new_str: 'y = 1' }), /same as old_str/);
    expectError(await edit({ command: 'str_replace', path: file, new_str: 'x' }), /`old_str` is required/);
    expect(await fs.readFile(file, 'utf8')).toBe('x = 1\ny = 1\nx = 1\n');
  });

  it('refuses to edit a directory', async () => {
    expectError(await edit({ command: 'str_replace', path: workspace, old_str: 'a', new_str: 'b' }), /is a directory/);
  });
});

describe('file_editor insert', () => {
  it('inserts after the given line, 0 being the top', async () => {
    const file = await write('a.txt', 'one\ntwo\n');
    const top = await edit({ command: 'insert', path: file, insert_line: 0, new_str: 'zero' });
    expect(top).toMatchObject({ is_error: false, old_content: 'one\ntwo\n', new_content: 'zero\none\ntwo\n' });
    await edit({ command: 'insert', path: file, insert_line: 3, new_str: 'three\nfour' });
    expect(await fs.readFile(file, 'utf8')).toBe('zero\none\ntwo\nthree\nfour\n');
    expect(text(top)).toContain('     1\tzero');
  });

  it('refuses a line past the end and a missing new_str or insert_line', async () => {
    const file = await write('a.txt', 'one\n');
    expectError(await edit({ command: 'insert', path: file, insert_line: 2, new_str: 'x' }), /must be 0 to 1/);
    expectError(await edit({ command: 'insert', path: file, insert_line: 1 }), /`new_str` is required/);
    expectError(await edit({ command: 'insert', path: file, new_str: 'x' }), /`insert_line` is required/);
  });
});

describe('file_editor undo_edit', () => {
  it('undoes edits one at a time, newest first', async () => {
    const file = await write('a.txt', 'v1\n');
    await edit({ command: 'str_replace', path: file, old_str: 'v1', new_str: 'v2' });
    await edit({ command: 'insert', path: file, insert_line: 1, new_str: 'more' });
    const first = await edit({ command: 'undo_edit', path: file });
    expect(first).toMatchObject({ is_error: false, old_content: 'v2\nmore\n', new_content: 'v2\n' });
    expect(await fs.readFile(file, 'utf8')).toBe('v2\n');
    await edit({ command: 'undo_edit', path: file });
    expect(await fs.readFile(file, 'utf8')).toBe('v1\n');
    expectError(await edit({ command: 'undo_edit', path: file }), /No edit of .* to undo/);
  });

  it('undoing a create removes the file', async () => {
    const file = path.join(workspace, 'made.txt');
    await edit({ command: 'create', path: file, file_text: 'new\n' });
    const undone = await edit({ command: 'undo_edit', path: file });
    expect(undone.is_error).toBe(false);
    expect(text(undone)).toContain('removed');
    expect(existsSync(file)).toBe(false);
  });
});

describe('file_editor concurrency', () => {
  it('applies concurrent edits of one file one after another', async () => {
    const file = await write('a.txt', 'a\nb\n');
    const [first, second] = await Promise.all([
      edit({ command: 'str_replace', path: file, old_str: 'a', new_str: 'A' }),
      edit({ command: 'str_replace', path: file, old_str: 'b', new_str: 'B' }),
    ]);
    expect(first.is_error || second.is_error).toBe(false);
    expect(await fs.readFile(file, 'utf8')).toBe('A\nB\n');
  });
});
