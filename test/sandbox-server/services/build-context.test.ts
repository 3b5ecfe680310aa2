import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BuildContextError, buildHash, readBuildContext } from '../../../src/sandbox-server/services/sandbox-specs/build-context.js';
import { tarOf } from '../../../src/sandbox-server/runtime/tar.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const MB = 1024 * 1024;

/** A directory packed by the system's tar (GNU: long names as its own headers, or pax with --format=pax). */
function packed(dir: string, format: 'gnu' | 'pax'): Buffer {
  return execFileSync('tar', ['-c', `--format=${format}`, '-C', dir, '.']);
}

function project(root: string, mtime: number): void {
  const deep = join(root, 'a'.repeat(60), 'b'.repeat(60));
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, 'long-named-file.txt'), 'deep\n');
  writeFileSync(join(root, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  writeFileSync(join(root, '.dockerignore'), 'secret\n');
  symlinkSync('run.sh', join(root, 'link'));
  for (const path of [join(deep, 'long-named-file.txt'), join(root, 'run.sh'), join(root, '.dockerignore')]) utimesSync(path, mtime, mtime);
}

/** A temporary directory, removed at the end of the block that holds it. */
async function tempDir(): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const path = await makeTempDir();
  return { path, [Symbol.asyncDispose]: () => removeDir(path) };
}

describe('build contexts', () => {
  it.each(['gnu', 'pax'] as const)('reads a %s tar: long names, modes, links, the .dockerignore', async (format) => {
    await using dir = await tempDir();
    project(dir.path, 1_000_000);
    const context = readBuildContext(packed(dir.path, format), MB);
    const byPath = new Map(context.entries.map((entry) => [entry.path, entry]));
    expect(byPath.get(`${'a'.repeat(60)}/${'b'.repeat(60)}/long-named-file.txt`)?.content.toString()).toBe('deep\n');
    expect(byPath.get('run.sh')).toMatchObject({ kind: 'file', mode: expect.any(Number) });
    expect((byPath.get('run.sh')?.mode ?? 0) & 0o111).not.toBe(0);
    expect(byPath.get('link')).toMatchObject({ kind: 'symlink', linkTarget: 'run.sh' });
    expect(context.dockerignore).toBe('secret\n');
    // The archive is kept whole but its end marker, for more entries to follow.
    expect(readBuildContext(Buffer.concat([context.archive, tarOf([{ path: 'more', mode: 0o644, content: Buffer.from('x') }])]), MB).entries.map((e) => e.path)).toContain('more');
  });

  it('hashes what is packed, not when or how: same files, other times and formats, gzip or not, are one input', async () => {
    await using one = await tempDir();
    await using two = await tempDir();
    project(one.path, 1_000_000);
    project(two.path, 2_000_000);
    const hashOf = (bytes: Buffer, dockerfile = 'FROM x\n') => buildHash(dockerfile, readBuildContext(bytes, MB).entries);
    const first = hashOf(packed(one.path, 'gnu'));
    expect(hashOf(packed(two.path, 'pax'))).toBe(first);
    expect(hashOf(gzipSync(packed(two.path, 'gnu')))).toBe(first);
    expect(hashOf(packed(one.path, 'gnu'), 'FROM y\n')).not.toBe(first);
    writeFileSync(join(two.path, 'run.sh'), '#!/bin/sh\necho changed\n');
    expect(hashOf(packed(two.path, 'gnu'))).not.toBe(first);
  });

  it('refuses what is not a tar, a path leaving the context, and more than the limit, saying why', () => {
    const refusal = (bytes: Buffer, max = MB) => {
      try {
        readBuildContext(bytes, max);
      } catch (error) {
        expect(error).toBeInstanceOf(BuildContextError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal(Buffer.from('plain text that is no archive at all'.repeat(20)))).toBe('the context is not a tar archive');
    expect(refusal(Buffer.from([0x1f, 0x8b, 1, 2, 3]))).toMatch(/not a readable gzip stream/);
    expect(refusal(tarOf([{ path: '../up', mode: 0o644, content: Buffer.from('x') }]))).toMatch(/outside itself: "..\/up"/);
    expect(refusal(tarOf([{ path: '/etc/passwd', mode: 0o644, content: Buffer.from('x') }]))).toMatch(/outside itself/);
    const big = tarOf([{ path: 'big', mode: 0o644, content: Buffer.alloc(2 * MB) }]);
    expect(refusal(big)).toMatch(/unpacks to more than 1 MB/);
    expect(refusal(gzipSync(big))).toMatch(/unpacks to more than 1 MB/);
    expect(refusal(big.subarray(0, 4096))).toMatch(/ends inside an entry/);
    const damaged = Buffer.from(tarOf([{ path: 'a', mode: 0o644, content: Buffer.from('x') }, { path: 'b', mode: 0o644, content: Buffer.from('y') }]));
    damaged[1024 + 3] = 0x41;
    expect(refusal(damaged)).toMatch(/damaged at byte 1024/);
  });
});
