/** `view` of a directory: its non-hidden entries two levels deep, directories marked with `/`. */
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

export async function listDirectory(dir: string, budget: number): Promise<string> {
  const top = await readSorted(dir);
  const hidden = top.filter(isHidden).length;
  const lines = [`${dir}/`];
  for (const entry of top.filter((e) => !isHidden(e))) {
    const entryPath = path.join(dir, entry.name);
    lines.push(entry.isDirectory() ? `${entryPath}/` : entryPath);
    if (!entry.isDirectory()) continue;
    // A subdirectory we may not read is listed without its contents rather than failing the view.
    const children = await readSorted(entryPath).catch((): Dirent[] => []);
    for (const child of children.filter((c) => !isHidden(c))) {
      const childPath = path.join(entryPath, child.name);
      lines.push(child.isDirectory() ? `${childPath}/` : childPath);
    }
  }
  const header = `Here are the files and directories up to 2 levels deep in ${dir}, excluding hidden items:`;
  const hiddenNote =
    hidden > 0 ? `\n${hidden} hidden files/directories in ${dir} are not shown; \`ls -la ${dir}\` lists them.` : '';
  return `${header}\n${fitLines(lines, budget)}${hiddenNote}`;
}

function fitLines(lines: string[], budget: number): string {
  let used = 0;
  for (let i = 0; i < lines.length; i++) {
    used += (lines[i]?.length ?? 0) + 1;
    if (used > budget) {
      const more = `[... ${lines.length - i} more entries not shown; list subdirectories one by one.]`;
      return `${lines.slice(0, i).join('\n')}\n${more}`;
    }
  }
  return lines.join('\n');
}

async function readSorted(dir: string): Promise<Dirent[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function isHidden(entry: Dirent): boolean {
  return entry.name.startsWith('.');
}
