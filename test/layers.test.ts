import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

/** Every relative import of every file under src/, as [importing file, imported file], both relative to src/. */
async function relativeImports(): Promise<[string, string][]> {
  const edges: [string, string][] = [];
  for (const entry of await readdir(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = await readFile(file, 'utf8');
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g)) {
      edges.push([relative(SRC, file), relative(SRC, resolve(dirname(file), match[1]!))]);
    }
  }
  return edges;
}

const topFolder = (path: string) => path.split('/')[0]!;

/** The import rules of docs/architecture.md, checked on the source so a new file cannot break them unseen. */
describe('layers', () => {
  it('keeps contracts, events and errors free of HTTP and of both servers', async () => {
    const shared = new Set(['contracts', 'events', 'errors']);
    const crossings = (await relativeImports()).filter(([from, to]) => shared.has(topFolder(from)) && !shared.has(topFolder(to)));
    expect(crossings).toEqual([]);
  });

  it('keeps the shared HTTP pieces free of both servers', async () => {
    const crossings = (await relativeImports()).filter(([from, to]) => topFolder(from) === 'http' && /^(agent|sandbox)-server$/.test(topFolder(to)));
    expect(crossings).toEqual([]);
  });

  it('keeps the two servers apart', async () => {
    const crossings = (await relativeImports()).filter(([from, to]) => {
      const servers = [topFolder(from), topFolder(to)];
      return servers.includes('agent-server') && servers.includes('sandbox-server') && servers[0] !== servers[1];
    });
    expect(crossings).toEqual([]);
  });
});
