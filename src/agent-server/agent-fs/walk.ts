/**
 * Resolves a path one name at a time on held directory descriptors, the way openat(2) with
 * O_NOFOLLOW would: each name is looked up in a directory this process holds open, through
 * `/proc/self/fd/N/name`, and opened with O_NOFOLLOW, so a symlink is seen as one and never
 * followed by the kernel. Links are followed here instead, from the link's own directory, and every
 * directory passed must be searchable by `rights`. Whatever the agent swaps on the way, each step
 * lands only where the agent's user could have gone itself.
 */
import { constants, type Stats } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { mayAccess, mayChangeEntry, type Rights } from './access.js';
import { errnoError, isErrno, OutsideError } from './errno.js';

/** Linux's O_PATH (the same on x86-64 and arm64); Node does not export it. */
export const O_PATH = 0o10000000;
/** Symlinks followed while resolving one path before giving up, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;

/** An open inode, what it is, and where it was reached. */
export interface Held {
  handle: FileHandle;
  stats: Stats;
  realPath: string;
}

export interface Resolved {
  /** The directory holding the last name (for `/` itself, `/`). */
  parent: Held;
  /** The last name, looked up in `parent` ('' for `/`). */
  name: string;
  /**
   * What `name` is, or undefined when there is no such entry: a directory on a real descriptor,
   * anything else on an O_PATH one (open it with reopen(), and check what that opened).
   */
  entry: Held | undefined;
  /** `name` is a symlink, not followed (followLast false); its stats may describe its target. */
  isLink: boolean;
  /** Where `name` is, whether or not it exists. */
  location: string;
  close(): Promise<void>;
}

export interface WalkOptions {
  rights: Rights;
  /** Follow a symlink in the last place (stat, open) or take it as it is (unlink). */
  followLast: boolean;
  /** Make missing directories on the way, owned by this user when given. */
  makeParents?: { owner: Owner | undefined };
  /** The real path of the only tree directories may be made in. */
  within?: string;
}

export interface Owner {
  uid: number;
  gid: number;
}

/** `name` looked up in the directory `dir` holds, wherever it has been moved since it was opened. */
export function inDir(dir: FileHandle, name?: string): string {
  return name === undefined ? `/proc/self/fd/${dir.fd}` : `/proc/self/fd/${dir.fd}/${name}`;
}

/** The inode an O_PATH handle holds, opened again for reading or writing (`flags`). */
export function reopen(held: Held, flags: number): Promise<FileHandle> {
  return fs.open(inDir(held.handle), flags | constants.O_NOCTTY | constants.O_NONBLOCK);
}

export async function resolvePath(target: string, options: WalkOptions): Promise<Resolved> {
  if (!path.isAbsolute(target)) throw errnoError('EINVAL', 'open', target);
  let wanted = path.resolve(target);
  for (let hops = 0; ; hops += 1) {
    if (hops > MAX_LINK_HOPS) throw errnoError('ELOOP', 'open', target);
    const step = await walkOnce(wanted, options);
    if ('resolved' in step) return step.resolved;
    wanted = step.restart;
  }
}

type Step = { resolved: Resolved } | { restart: string };

/** Walks `wanted` from `/`; at a symlink to follow, or a race lost, answers the path to walk instead. */
async function walkOnce(wanted: string, options: WalkOptions): Promise<Step> {
  const names = wanted.split('/').filter((name) => name !== '');
  let dir = await openHeld('/', DIRECTORY_FLAGS, '/');
  let handedOver = false;
  try {
    if (names.length === 0) {
      const root = dir;
      handedOver = true;
      return { resolved: { parent: root, name: '', entry: root, isLink: false, location: '/', close: () => root.handle.close() } };
    }
    const lastName = names[names.length - 1] as string;
    for (const [i, name] of names.slice(0, -1).entries()) {
      const found = await lookUp(dir, name, { follow: true, rest: names.slice(i + 1), wanted, options });
      if ('restart' in found) return found;
      const next = found.entry ?? (await makeDir(dir, name, found.location, options, wanted));
      if (next === undefined) return { restart: wanted };
      await dir.handle.close();
      dir = next;
      if (!next.stats.isDirectory()) throw errnoError('ENOTDIR', 'open', wanted);
    }
    const found = await lookUp(dir, lastName, { follow: options.followLast, rest: [], wanted, options });
    if ('restart' in found) return found;
    const { entry, location, isLink } = found;
    const parent = dir;
    handedOver = true;
    const close = async () => {
      await entry?.handle.close();
      await parent.handle.close();
    };
    return { resolved: { parent, name: lastName, entry, isLink, location, close } };
  } finally {
    if (!handedOver) await dir.handle.close().catch(() => {});
  }
}

interface LookUp {
  follow: boolean;
  /** The names after this one, walked from a followed link's target. */
  rest: string[];
  wanted: string;
  options: WalkOptions;
}

/** One name in `dir`: its entry (undefined when missing), or where to walk instead when it is a link to follow. */
async function lookUp(dir: Held, name: string, how: LookUp): Promise<Found | { restart: string }> {
  if (!mayAccess(dir.stats, how.options.rights, 'search')) throw errnoError('EACCES', 'open', how.wanted);
  const location = path.join(dir.realPath, name);
  const link = await readLink(dir, name);
  if (link !== undefined && how.follow) return { restart: path.resolve(dir.realPath, link, ...how.rest) };
  const entry = await openEntry(dir, name, location, link !== undefined);
  // Swapped while we looked: walk again, which counts as a hop.
  if (entry === 'raced') return { restart: how.wanted };
  return { entry, location, isLink: link !== undefined };
}

interface Found {
  entry: Held | undefined;
  location: string;
  /** The entry is a symlink, taken as it is (not followed). */
  isLink: boolean;
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

async function openHeld(file: string, flags: number, realPath: string): Promise<Held> {
  const handle = await fs.open(file, flags);
  try {
    return { handle, stats: await handle.stat(), realPath };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * A directory is held on a descriptor really opened (O_DIRECTORY | O_NOFOLLOW, which a link or a
 * FIFO fails without being opened), anything else on an O_PATH one, opened for real only once
 * checked (reopen). gVisor's fstat of an O_PATH descriptor of a symlink describes the link's
 * target, so a directory is never taken from one: 'raced' when one shows up there.
 */
async function openEntry(dir: Held, name: string, location: string, isLink: boolean): Promise<Held | undefined | 'raced'> {
  const file = inDir(dir.handle, name);
  if (!isLink) {
    try {
      return await openHeld(file, DIRECTORY_FLAGS, location);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined;
      if (!isErrno(error, 'ENOTDIR', 'ELOOP')) throw error;
    }
  }
  let entry: Held;
  try {
    entry = await openHeld(file, O_PATH | constants.O_NOFOLLOW, location);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  if (isLink || !entry.stats.isDirectory()) return entry;
  await entry.handle.close();
  return 'raced';
}

/** The target of the symlink `name`, or undefined when it is no longer one. */
async function readLink(dir: Held, name: string): Promise<string | undefined> {
  try {
    return await fs.readlink(inDir(dir.handle, name));
  } catch (error) {
    if (isErrno(error, 'EINVAL', 'ENOENT')) return undefined;
    throw error;
  }
}

/** A missing directory on the way, made when the walk may make parents. */
async function makeDir(dir: Held, name: string, location: string, options: WalkOptions, wanted: string): Promise<Held | undefined> {
  if (!options.makeParents) throw errnoError('ENOENT', 'open', wanted);
  if (options.within !== undefined && !isInside(options.within, location)) throw new OutsideError(wanted, options.within);
  return makeDirIn(dir, name, location, options.rights, options.makeParents.owner);
}

/**
 * mkdir of `name` in `dir`, given to `owner`; undefined when something took the name first. Only
 * a directory this process owns and that is still empty is given away: the agent may have put
 * another one in its place meanwhile.
 */
export async function makeDirIn(dir: Held, name: string, location: string, rights: Rights, owner: Owner | undefined): Promise<Held | undefined> {
  if (!mayChangeEntry(dir.stats, undefined, rights)) throw errnoError('EACCES', 'mkdir', location);
  try {
    await fs.mkdir(inDir(dir.handle, name));
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return undefined;
    throw error;
  }
  const made = await openHeld(inDir(dir.handle, name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW, location);
  try {
    if (owner && made.stats.uid === process.getuid?.() && (await fs.readdir(inDir(made.handle))).length === 0) {
      await made.handle.chown(owner.uid, owner.gid);
      made.stats = await made.handle.stat();
    }
    return made;
  } catch (error) {
    await made.handle.close();
    throw error;
  }
}

export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
