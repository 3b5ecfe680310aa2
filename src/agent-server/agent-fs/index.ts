/**
 * Files touched on the agent's behalf (the file editor and the other file tools, /api/file uploads
 * and downloads, the workspace made for a conversation), with the agent user's rights.
 *
 * The agent-server runs as root and the agent as an unprivileged user. A path the agent names is
 * the agent's to race: checking it and then opening it would follow whatever symlink the agent
 * swapped in between (and did: the editor once read the server's own meta.json and rewrote
 * /app/package.json). Here no path is checked and then used: each name is looked up in a directory
 * held open (walk.ts), links are followed only by the walk, every directory and file is checked
 * against the agent's mode bits (access.ts), reads and writes go through the descriptor so found,
 * and new files and directories are given to the agent on their descriptors (fchown). So no race
 * reaches anything the agent's own user could not reach.
 *
 * Errors are Node-style system errors (`code`: ENOENT, EACCES, EISDIR, ENOTDIR, EEXIST, ELOOP,
 * EFBIG, and NOT_REGULAR for a FIFO, socket or device), or an OutsideError when the AgentFs was
 * confined to a tree (`within`) and the path, links followed, leads out of it.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AgentUser } from '../agent-user.js';
import { mayAccess, mayChangeEntry, type Rights } from './access.js';
import { errnoError, NOT_REGULAR, OutsideError } from './errno.js';
import { type Held, inDir, isInside, makeDirIn, type Owner, reopen, type Resolved, resolvePath, type WalkOptions } from './walk.js';

export { isErrno, NOT_REGULAR, OutsideError } from './errno.js';
export type { Rights } from './access.js';

export interface AgentFsOptions {
  /** Whose rights apply and who owns what is made; this process's own user when absent. */
  user?: AgentUser;
  /** The only tree paths may lead into (links followed), e.g. the workspace; anywhere when absent. */
  within?: string;
}

export interface DirEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
}

export interface WriteOptions {
  /** Refuse (EEXIST) when the file exists, rather than overwriting it in place. */
  exclusive?: boolean;
  /** Make missing parent directories, owned by the agent. */
  makeParents?: boolean;
}

export interface AgentFs {
  /** Whose rights the operations run with. */
  readonly rights: Rights;
  /** stat(2), links followed: what a path is. Needs only search rights on the way, as stat does. */
  stat(path: string): Promise<Stats>;
  /** A whole regular file; EFBIG when it is larger than `maxBytes`. */
  readFile(path: string, options?: { maxBytes?: number }): Promise<Buffer>;
  /** A regular file opened for reading, with its stat; the caller closes the handle. */
  openFile(path: string): Promise<{ handle: FileHandle; stats: Stats }>;
  /** A directory's entries, unsorted, as readdir(3) gives them. */
  readDir(path: string): Promise<DirEntry[]>;
  /** Writes a regular file in place (same inode, mode and owner), or creates it for the agent. */
  writeFile(path: string, data: string | Uint8Array, options?: WriteOptions): Promise<{ created: boolean }>;
  /**
   * Writes `source` beside the file and renames it over the old one, so a reader never sees half a
   * file and a failed write leaves the old one; the new file belongs to the agent.
   */
  replaceFile(path: string, source: Readable, options?: { makeParents?: boolean }): Promise<void>;
  /** mkdir -p; the directories made belong to the agent. */
  makeDirs(path: string): Promise<void>;
  /** unlink(2) of a file or symlink (a symlink itself, not its target). */
  removeFile(path: string): Promise<void>;
}

/** Retries of a write whose file appeared or vanished between looking and creating. */
const RACE_RETRIES = 5;

export function createAgentFs(options: AgentFsOptions = {}): AgentFs {
  const rights = rightsOf(options.user);
  const owner = ownerOf(options.user);
  const fsx: FsContext = { within: options.within, rights, owner };

  async function writeOnce(path: string, data: string | Uint8Array, write: WriteOptions): Promise<{ created: boolean } | 'raced'> {
    return withResolved(fsx, path, { followLast: true, makeParents: write.makeParents }, async (found) => {
      if (found.entry && write.exclusive) throw errnoError('EEXIST', 'open', path);
      if (found.entry) {
        const { handle } = await openRegular(fsx, found, path, 'write');
        await writeAndClose(handle, data, { truncate: true });
        return { created: false };
      }
      const handle = await createIn(fsx, found, found.name, path).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && !write.exclusive) return 'raced' as const;
        throw error;
      });
      if (handle === 'raced') return 'raced';
      await writeAndClose(handle, data);
      return { created: true };
    });
  }

  return {
    rights,

    stat: (path) => withResolved(fsx, path, { followLast: true }, async (found) => existing(found, path).stats),

    readFile: (path, read = {}) =>
      withResolved(fsx, path, { followLast: true }, async (found) => {
        const { handle, stats } = await openRegular(fsx, found, path, 'read');
        try {
          if (read.maxBytes !== undefined && stats.size > read.maxBytes) throw errnoError('EFBIG', 'read', path);
          return await handle.readFile();
        } finally {
          await handle.close();
        }
      }),

    openFile: (path) => withResolved(fsx, path, { followLast: true }, (found) => openRegular(fsx, found, path, 'read')),

    readDir: (path) =>
      withResolved(fsx, path, { followLast: true }, async (found) => {
        const entry = existing(found, path);
        if (!entry.stats.isDirectory()) throw errnoError('ENOTDIR', 'scandir', path);
        if (!mayAccess(entry.stats, rights, 'read')) throw errnoError('EACCES', 'scandir', path);
        const entries = await fs.readdir(inDir(entry.handle), { withFileTypes: true });
        return entries.map((dirent) => ({
          name: dirent.name,
          type: dirent.isFile() ? 'file' : dirent.isDirectory() ? 'directory' : dirent.isSymbolicLink() ? 'symlink' : 'other',
        }));
      }),

    async writeFile(path, data, write = {}) {
      for (let attempt = 0; attempt < RACE_RETRIES; attempt += 1) {
        const written = await writeOnce(path, data, write);
        if (written !== 'raced') return written;
      }
      throw errnoError('EEXIST', 'open', path);
    },

    replaceFile: (path, source, replace = {}) =>
      withResolved(fsx, path, { followLast: true, makeParents: replace.makeParents }, async (found) => {
        if (found.entry?.stats.isDirectory()) throw errnoError('EISDIR', 'rename', path);
        if (!mayChangeEntry(found.parent.stats, found.entry?.stats, rights)) throw errnoError('EACCES', 'rename', path);
        const temporary = `.${found.name}.upload-${randomBytes(6).toString('hex')}`;
        const handle = await createIn(fsx, found, temporary, path);
        try {
          await pipeline(source, handle.createWriteStream());
          await fs.rename(inDir(found.parent.handle, temporary), inDir(found.parent.handle, found.name));
        } catch (error) {
          await fs.unlink(inDir(found.parent.handle, temporary)).catch(() => {});
          throw error;
        } finally {
          await handle.close().catch(() => {});
        }
      }),

    async makeDirs(path) {
      for (let attempt = 0; attempt < RACE_RETRIES; attempt += 1) {
        const made = await withResolved(fsx, path, { followLast: true, makeParents: true }, async (found) => {
          if (found.entry) {
            if (!found.entry.stats.isDirectory()) throw errnoError('EEXIST', 'mkdir', path);
            return true;
          }
          return makeLastDir(fsx, found, path);
        });
        if (made) return;
      }
      throw errnoError('EEXIST', 'mkdir', path);
    },

    removeFile: (path) =>
      withResolved(fsx, path, { followLast: false }, async (found) => {
        const entry = existing(found, path);
        if (entry.stats.isDirectory() && !found.isLink) throw errnoError('EISDIR', 'unlink', path);
        if (!mayChangeEntry(found.parent.stats, entry.stats, rights)) throw errnoError('EACCES', 'unlink', path);
        await fs.unlink(inDir(found.parent.handle, found.name));
      }),
  };

}

/** Who the walks act as, and the tree they are confined to. */
interface FsContext {
  within: string | undefined;
  rights: Rights;
  owner: Owner | undefined;
}

async function resolve({ within: confinedTo, rights, owner }: FsContext, path: string, how: { followLast: boolean; makeParents?: boolean }): Promise<Resolved> {
  const within = confinedTo === undefined ? undefined : await fs.realpath(confinedTo);
  const walk: WalkOptions = { rights, followLast: how.followLast, within };
  if (how.makeParents) walk.makeParents = { owner };
  const resolved = await resolvePath(path, walk);
  if (within !== undefined && !isInside(within, resolved.location)) {
    await resolved.close();
    throw new OutsideError(path, confinedTo ?? within);
  }
  return resolved;
}

async function withResolved<T>(fsx: FsContext, path: string, how: { followLast: boolean; makeParents?: boolean }, use: (found: Resolved) => Promise<T>): Promise<T> {
  const found = await resolve(fsx, path, how);
  try {
    return await use(found);
  } finally {
    await found.close();
  }
}

function existing(found: Resolved, path: string): Held {
  if (!found.entry) throw errnoError('ENOENT', 'open', path);
  return found.entry;
}

/**
 * The entry opened for reading or writing, checked on the opened descriptor itself: the same
 * inode the walk found, a regular file, and the agent's to read or write. (gVisor's fstat of an
 * O_PATH descriptor of a symlink describes the link's target, so the walk's own stat is not
 * trusted for this.) Never opened with O_TRUNC: nothing changes before the check.
 */
async function openRegular({ rights }: FsContext, found: Resolved, path: string, access: 'read' | 'write'): Promise<{ handle: FileHandle; stats: Stats }> {
  const entry = existing(found, path);
  if (entry.stats.isDirectory()) throw errnoError('EISDIR', 'open', path);
  if (!entry.stats.isFile()) throw errnoError(NOT_REGULAR, 'open', path);
  const handle = await reopen(entry, access === 'read' ? constants.O_RDONLY : constants.O_WRONLY);
  try {
    const stats = await handle.stat();
    if (stats.dev !== entry.stats.dev || stats.ino !== entry.stats.ino || !stats.isFile()) throw errnoError('ELOOP', 'open', path);
    if (!mayAccess(stats, rights, access)) throw errnoError('EACCES', 'open', path);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** A new file `name` in `found.parent`, created exclusively and given to the agent on its descriptor. */
async function createIn({ rights, owner }: FsContext, found: Resolved, name: string, path: string): Promise<FileHandle> {
  if (!mayChangeEntry(found.parent.stats, undefined, rights)) throw errnoError('EACCES', 'open', path);
  const flags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;
  const handle = await fs.open(inDir(found.parent.handle, name), flags, 0o666);
  try {
    if (owner) await handle.chown(owner.uid, owner.gid);
    return handle;
  } catch (error) {
    await handle.close();
    await fs.unlink(inDir(found.parent.handle, name)).catch(() => {});
    throw error;
  }
}

/** mkdir of the last name; false when something took its place first (look again). */
async function makeLastDir({ rights, owner }: FsContext, found: Resolved, path: string): Promise<boolean> {
  const made = await makeDirIn(found.parent, found.name, found.location, rights, owner);
  await made?.handle.close();
  return made !== undefined;
}

async function writeAndClose(handle: FileHandle, data: string | Uint8Array, how = { truncate: false }): Promise<void> {
  try {
    if (how.truncate) await handle.truncate(0);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** The agent's uid and primary group; this process's own when there is no agent user. */
export function rightsOf(user: AgentUser | undefined): Rights {
  if (user) return { uid: user.uid, gids: [user.gid] };
  return { uid: process.getuid?.() ?? 0, gids: [process.getgid?.() ?? 0, ...(process.getgroups?.() ?? [])] };
}

/** Whom new files are given to: the agent, when it is not this process's user. */
function ownerOf(user: AgentUser | undefined): Owner | undefined {
  return user && user.uid !== process.getuid?.() ? { uid: user.uid, gid: user.gid } : undefined;
}
