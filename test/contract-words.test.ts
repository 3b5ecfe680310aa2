import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

/** Each `file:line` of src/ whose text matches `pattern`, comments included. */
async function spellings(pattern: RegExp): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines.forEach((line, index) => {
      if (pattern.test(line)) found.push(`${relative(SRC, file)}:${index + 1}`);
    });
  }
  return found;
}

/**
 * A word both sides of a seam must agree on is spelled once, in src/contracts/, and imported
 * wherever it is used: a second spelling is a second place to forget when it changes.
 */
describe('contract words are spelled once', () => {
  it('the session-key header, in contracts/agent-server/session-key.ts', async () => {
    expect(await spellings(/x-session-api-key/i)).toEqual(['contracts/agent-server/session-key.ts:6']);
  });

  it('the event sort orders, in contracts/event-sort-order.ts', async () => {
    expect(await spellings(/\[\s*'TIMESTAMP',\s*'TIMESTAMP_DESC'\s*\]|'TIMESTAMP'\s*\|\s*'TIMESTAMP_DESC'/)).toEqual(['contracts/event-sort-order.ts:5']);
  });

  it('the comparison of key digests, in contracts/digest-match.ts', async () => {
    expect(await spellings(/timingSafeEqual\(/)).toEqual(['contracts/digest-match.ts:10']);
  });

  it('the OCI runtimes, in contracts/sandbox.ts', async () => {
    expect(await spellings(/'runc',\s*'runsc'|'runsc',\s*'runc'|'runc'\s*\|\s*'runsc'/)).toEqual(['contracts/sandbox.ts:19']);
  });

  it('a page of results, in contracts/paging.ts', async () => {
    expect(await spellings(/interface Page\b|type Page\s*[<=]/)).toEqual(['contracts/paging.ts:9']);
  });
});
