import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

/** Each `any` written in a type, as `file:line`, found in the syntax tree (so not in comments or strings). */
async function explicitAnys(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const source = ts.createSourceFile(file, await readFile(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.AnyKeyword) {
        found.push(`${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/**
 * `any` turns the type checker off where it is written: in the source, in the benches, and in
 * tests, where answers are checked against their models instead (test/helpers/answer.ts). The
 * project has no linter, so this is its no-explicit-any rule.
 */
describe('no explicit any', () => {
  it.each(['src', 'test', 'bench'])('in %s/', async (dir) => {
    expect(await explicitAnys(dir)).toEqual([]);
  });
});
