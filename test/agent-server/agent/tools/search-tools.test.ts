import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGlobTool, createGrepTool } from '../../../../src/agent-server/agent/tools/search/search-tools.js';
import { hasProgram } from '../../../../src/agent-server/agent/tools/search/run-search.js';
import { globMatcher } from '../../../../src/agent-server/agent/tools/search/glob-pattern.js';
import { makeTempDir, removeDir } from '../../../helpers/temp-dir.js';

let workspace: string;

/** Files with modification times one second apart, in the order given (the last is the newest). */
async function writeAged(files: [string, string][]): Promise<void> {
  const start = Date.now() / 1000 - files.length - 10;
  for (const [index, [file, text]] of files.entries()) {
    const full = join(workspace, file);
    await mkdir(join(full, '..'), { recursive: true });
    await writeFile(full, text);
    await utimes(full, start + index, start + index);
  }
}

beforeAll(async () => {
  workspace = await makeTempDir('search-tools-');
  await writeAged([
    ['src/old.ts', 'const Value = 1;\n'],
    ['src/lib/util.ts', 'export function helper() { return "VALUE"; }\n'],
    ['src/view.tsx', 'nothing here\n'],
    ['README.md', 'the value of it\n'],
    ['.hidden/secret.ts', 'value\n'],
    ['src/.env.ts', 'value\n'],
    ['many/placeholder', ''],
  ]);
  await Promise.all(Array.from({ length: 105 }, (_, i) => writeFile(join(workspace, 'many', `f${i}.txt`), 'needle\n')));
});
afterAll(() => removeDir(workspace));

// Both backends run here: CI provisions ripgrep (.ci/run), and find and grep are in every image.
it('finds ripgrep on this machine, so both backends are exercised', () => {
  expect(hasProgram('rg')).toBe(true);
  expect(hasProgram('no-such-program-here')).toBe(false);
});

describe.each(['ripgrep', 'find'] as const)('glob and grep with %s', (backend) => {
  const glob = () => createGlobTool({ workspaceDir: workspace, backend });
  const grep = () => createGrepTool({ workspaceDir: workspace, backend });
  const run = async <A>(tool: { parseArguments(a: unknown): { ok: true; action: A } | { ok: false; error: string }; execute(a: A): Promise<unknown> }, args: unknown) => {
    const parsed = tool.parseArguments(args);
    if (!parsed.ok) throw new Error(parsed.error);
    return tool.execute(parsed.action);
  };

  it('globs names at any depth, newest first, skipping hidden files', async () => {
    expect(await run(glob(), { pattern: '*.ts' })).toMatchObject({
      kind: 'GlobObservation',
      files: [join(workspace, 'src/lib/util.ts'), join(workspace, 'src/old.ts')],
      search_path: workspace,
      truncated: false,
      is_error: false,
    });
    expect(await run(glob(), { pattern: 'src/**/*.{ts,tsx}' })).toMatchObject({
      files: [join(workspace, 'src/view.tsx'), join(workspace, 'src/lib/util.ts'), join(workspace, 'src/old.ts')],
    });
    expect(await run(glob(), { pattern: `${workspace}/src/lib/*.ts` })).toMatchObject({ files: [join(workspace, 'src/lib/util.ts')], search_path: join(workspace, 'src/lib') });
    expect(await run(glob(), { pattern: '*.py' })).toMatchObject({ files: [], is_error: false, content: [{ text: expect.stringContaining('No files found') }] });
  });

  it('returns at most 100 results and says when it cut', async () => {
    const found = (await run(glob(), { pattern: '*.txt', path: join(workspace, 'many') })) as { files: string[]; truncated: boolean; content: { text: string }[] };
    expect(found.files).toHaveLength(100);
    expect(found.truncated).toBe(true);
    expect(found.content[0]?.text).toContain('truncated to the first 100');
    const grepped = (await run(grep(), { pattern: 'needle' })) as { matches: string[]; truncated: boolean };
    expect(grepped.truncated).toBe(true);
    expect(grepped.matches).toHaveLength(100);
    expect(grepped.matches.every((file) => file.startsWith(join(workspace, 'many/f')))).toBe(true);
  });

  it('greps contents case-insensitively with a regex, newest first, filtered by include', async () => {
    expect(await run(grep(), { pattern: 'val\\w+' })).toMatchObject({
      kind: 'GrepObservation',
      matches: [join(workspace, 'README.md'), join(workspace, 'src/lib/util.ts'), join(workspace, 'src/old.ts')],
      is_error: false,
    });
    expect(await run(grep(), { pattern: 'value', include: '*.ts', path: join(workspace, 'src') })).toMatchObject({
      matches: [join(workspace, 'src/lib/util.ts'), join(workspace, 'src/old.ts')],
      include_pattern: '*.ts',
      search_path: join(workspace, 'src'),
    });
    expect(await run(grep(), { pattern: 'absent-text' })).toMatchObject({ matches: [], is_error: false });
  });

  it('reports a bad regex and a missing directory as errors the agent can read', async () => {
    expect(await run(grep(), { pattern: '(unclosed' })).toMatchObject({ matches: [], is_error: true });
    expect(await run(glob(), { pattern: '*', path: join(workspace, 'nowhere') })).toMatchObject({ files: [], is_error: true });
    expect(await run(grep(), { pattern: 'x', path: join(workspace, 'nowhere') })).toMatchObject({ matches: [], is_error: true });
  });
});

describe('globMatcher', () => {
  it('reads patterns as ripgrep does', () => {
    expect(globMatcher('*.ts')('a/b/c.ts')).toBe(true);
    expect(globMatcher('src/*.ts')('src/a/b.ts')).toBe(false);
    expect(globMatcher('src/**/*.ts')('src/b.ts')).toBe(true);
    expect(globMatcher('src/**/*.ts')('src/a/b.ts')).toBe(true);
    expect(globMatcher('**/test_*.py')('test_a.py')).toBe(true);
    expect(globMatcher('*.{json,yml}')('x/c.yml')).toBe(true);
    expect(globMatcher('file?.[ch]')('file1.c')).toBe(true);
    expect(globMatcher('file?.[!ch]')('file1.c')).toBe(false);
    expect(globMatcher('a.b')('axb')).toBe(false);
  });
});
