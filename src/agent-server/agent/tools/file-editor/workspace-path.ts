/**
 * The file editor works on absolute paths inside the workspace only. `..` is resolved, and so is
 * every symlink on the way, including one whose target does not exist yet (which `create` would
 * otherwise write through), so neither can lead outside.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

export type WorkspacePath = { ok: true; path: string } | { ok: false; error: string };

/** Symlinks followed while resolving one path before giving up, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;

export async function resolveWorkspacePath(workspaceDir: string, requested: string): Promise<WorkspacePath> {
  if (!path.isAbsolute(requested)) {
    const suggestion = path.join(workspaceDir, requested);
    const hint = (await exists(suggestion)) ? ` Did you mean ${suggestion}?` : '';
    return { ok: false, error: `The path ${requested} is not absolute: it must start with \`/\`.${hint}` };
  }
  const target = path.resolve(requested);
  const [realRoot, realTarget] = await Promise.all([fs.realpath(workspaceDir), realpathOfExistingPart(target)]);
  if (!isInside(realRoot, realTarget)) {
    return {
      ok: false,
      error: `The path ${requested} is outside the workspace ${workspaceDir}; the file editor only works inside it.`,
    };
  }
  return { ok: true, path: target };
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** Where `target` really is: the real path of its longest existing part, plus the rest. */
async function realpathOfExistingPart(target: string): Promise<string> {
  let existing = target;
  const rest: string[] = [];
  let hops = 0;
  for (;;) {
    try {
      return path.join(await fs.realpath(existing), ...rest);
    } catch (error) {
      if (!isErrno(error, 'ENOENT', 'ENOTDIR')) throw error;
    }
    const link = await readlinkOrNull(existing);
    if (link !== null) {
      hops += 1;
      if (hops > MAX_LINK_HOPS) {
        throw Object.assign(new Error(`Too many symbolic links in ${target}`), { code: 'ELOOP' });
      }
      existing = path.resolve(path.dirname(existing), link);
      continue;
    }
    const parent = path.dirname(existing);
    if (parent === existing) return path.join(existing, ...rest);
    rest.unshift(path.basename(existing));
    existing = parent;
  }
}

async function readlinkOrNull(file: string): Promise<string | null> {
  try {
    return await fs.readlink(file);
  } catch {
    return null;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

export function isErrno(error: unknown, ...codes: string[]): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' &&
    (codes.length === 0 || codes.includes((error as NodeJS.ErrnoException).code as string));
}
