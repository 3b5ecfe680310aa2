import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');
const MAX_FUNCTION_LINES = 120;
const MAX_FILE_LINES = 300;
/** The rooms that once held several jobs each (issue 24); they stay one job, under the file limit. */
const KEPT_SMALL = ['sandbox-server/server.ts', 'sandbox-server/runtime/docker.ts', 'sandbox-server/reconciler/loop.ts'];

interface LongFunction {
  /** `file:line name`, relative to src/. */
  at: string;
  lines: number;
}

/** Every function in `text` (declarations, methods, arrows, accessors) over `max` lines, its nested ones counted in. */
function longFunctions(file: string, text: string, max: number): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) found.push({ at: `${file}:${first + 1} ${nameOf(node)}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  return '(anonymous)';
}

async function sources(): Promise<{ file: string; text: string }[]> {
  const found = [];
  for (const entry of await readdir(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    found.push({ file: relative(SRC, path), text: await readFile(path, 'utf8') });
  }
  return found;
}

describe('size of rooms', () => {
  it(`has no function in src/ over ${MAX_FUNCTION_LINES} lines`, async () => {
    const long = (await sources()).flatMap(({ file, text }) => longFunctions(file, text, MAX_FUNCTION_LINES));
    expect(long).toEqual([]);
  });

  it(`keeps ${KEPT_SMALL.join(', ')} under ${MAX_FILE_LINES} lines`, async () => {
    const files = (await sources()).filter(({ file }) => KEPT_SMALL.includes(file));
    expect(files.map(({ file }) => file).sort()).toEqual([...KEPT_SMALL].sort());
    const big = files.map(({ file, text }) => ({ file, lines: text.split('\n').length })).filter(({ lines }) => lines >= MAX_FILE_LINES);
    expect(big).toEqual([]);
  });

  it('measures a function from its first line to its last, nested functions included', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES - 2 }, (_, i) => `  const a${i} = ${i};`).join('\n');
    const fits = `export function fits() {\n${body}\n}\n`;
    const over = `export const over = () => {\n${body}\n  return () => 1;\n};\n`;
    expect(longFunctions('fits.ts', fits, MAX_FUNCTION_LINES)).toEqual([]);
    expect(longFunctions('over.ts', over, MAX_FUNCTION_LINES)).toEqual([{ at: 'over.ts:1 over', lines: MAX_FUNCTION_LINES + 1 }]);
  });
});
