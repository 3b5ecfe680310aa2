import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

interface Import {
  /** The importing file, relative to src/. */
  from: string;
  /** The imported file relative to src/ (`contracts/paging.js`), or the package as named (`drizzle-orm`). */
  to: string;
  isFile: boolean;
}

async function imports(): Promise<Import[]> {
  const found: Import[] = [];
  for (const entry of await readdir(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = await readFile(file, 'utf8');
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/g)) {
      const specifier = match[1]!;
      const isFile = specifier.startsWith('.');
      found.push({ from: relative(SRC, file), to: isFile ? relative(SRC, resolve(dirname(file), specifier)) : specifier, isFile });
    }
  }
  return found;
}

/** `contracts` for `contracts/paging.js`, `logger.js` for a file at the top of src/. */
const topOf = (path: string) => path.split('/')[0]!;

/** The import rules of docs/architecture.md, checked on the source so that a new file cannot break them unseen. */
describe('layers', () => {
  it('keeps contracts, events and errors free of HTTP, of both servers and of anything else in src/', async () => {
    const shared = new Set(['contracts', 'events', 'errors']);
    const crossings = (await imports()).filter(({ from, to, isFile }) => shared.has(topOf(from)) && isFile && !shared.has(topOf(to)));
    expect(crossings).toEqual([]);
  });

  it('keeps the shared HTTP pieces free of both servers', async () => {
    const crossings = (await imports()).filter(({ from, to, isFile }) => topOf(from) === 'http' && isFile && /^(agent|sandbox)-server$/.test(topOf(to)));
    expect(crossings).toEqual([]);
  });

  it('keeps the two servers apart', async () => {
    const crossings = (await imports()).filter(({ from, to, isFile }) => {
      const servers = new Set([topOf(from), topOf(to)]);
      return isFile && servers.size === 2 && servers.has('agent-server') && servers.has('sandbox-server');
    });
    expect(crossings).toEqual([]);
  });

  it('keeps the control plane routes off the database and the engine: they call services', async () => {
    const crossings = (await imports()).filter(
      ({ from, to, isFile }) =>
        from.startsWith('sandbox-server/routes/') && (isFile ? to.startsWith('sandbox-server/db/') : /^(drizzle-orm|dockerode|postgres)\b/.test(to)),
    );
    expect(crossings).toEqual([]);
  });
});
