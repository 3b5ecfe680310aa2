/** `view` of a directory: its non-hidden entries two levels deep, directories marked with `/`. */
import path from 'node:path';
import type { AgentFs, DirEntry } from '../../../agent-fs/index.js';

export async function listDirectory(files: AgentFs, dir: string, budget: number): Promise<string> {
  const top = await readSorted(files, dir);
  const hidden = top.filter(isHidden).length;
  const lines = [`${dir}/`];
  for (const entry of top.filter((e) => !isHidden(e))) {
    const entryPath = path.join(dir, entry.name);
    lines.push(entry.type === 'directory' ? `${entryPath}/` : entryPath);
    if (entry.type !== 'directory') continue;
    // A subdirectory we may not read is listed without its contents rather than failing the view.
    const children = await readSorted(files, entryPath).catch((): DirEntry[] => []);
    for (const child of children.filter((c) => !isHidden(c))) {
      const childPath = path.join(entryPath, child.name);
      lines.push(child.type === 'directory' ? `${childPath}/` : childPath);
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

async function readSorted(files: AgentFs, dir: string): Promise<DirEntry[]> {
  const entries = await files.readDir(dir);
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function isHidden(entry: DirEntry): boolean {
  return entry.name.startsWith('.');
}
