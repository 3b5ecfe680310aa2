import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerignoreRules, isIgnored, packBuildContext } from '../../src/cli/build-context.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

describe('sandboxctl build contexts', () => {
  it('reads a .dockerignore as Docker does: the last matching line decides, a directory takes what is under it', () => {
    const rules = dockerignoreRules('# comment\n\nnode_modules\n*.log\n!keep.log\n/build/\n**/secret*\ndocs/*.md\n!docs/README.md\n[ab].txt\n');
    const cases: [string, boolean][] = [
      ['node_modules', true],
      ['node_modules/pkg/index.js', true],
      ['src/node_modules', false],
      ['app.log', true],
      ['keep.log', false],
      ['logs/app.log', false],
      ['build/out.js', true],
      ['secret.txt', true],
      ['deep/er/secret-key', true],
      ['docs/guide.md', true],
      ['docs/README.md', false],
      ['docs/sub/guide.md', false],
      ['a.txt', true],
      ['c.txt', false],
      ['Dockerfile', false],
    ];
    expect(cases.map(([path]) => [path, isIgnored(rules, path)])).toEqual(cases);
  });

  describe('packing a directory', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await makeTempDir('sandboxctl-context-');
      await mkdir(join(dir, 'src'), { recursive: true });
      await mkdir(join(dir, 'node_modules', 'x'), { recursive: true });
      await writeFile(join(dir, 'src', 'main.py'), 'print(1)\n');
      await writeFile(join(dir, 'node_modules', 'x', 'index.js'), '');
      await writeFile(join(dir, 'debug.log'), '');
      await writeFile(join(dir, '.dockerignore'), 'node_modules\n*.log\n');
    });
    afterAll(() => removeDir(dir));

    it('sends what the .dockerignore leaves in, as a tar', async () => {
      const tar = await packBuildContext(dir);
      const listed = execFileSync('tar', ['-t'], { input: tar }).toString().trim().split('\n').sort();
      expect(listed).toEqual(['./.dockerignore', './src/', './src/main.py']);
    });

    it('says what is wrong with a directory it cannot read', async () => {
      await expect(packBuildContext(join(dir, 'missing'))).rejects.toThrow(/cannot read the context directory .*missing/);
    });
  });
});
