/**
 * The kernel's discretionary access check, done for a user other than this process's: the
 * agent-server runs as root and must refuse what the agent's own user would be refused. Mode bits
 * only (no ACLs): where an ACL would grant more, the agent is refused, which is the safe side.
 */

/** Whom an access is checked for: a uid and the groups its processes carry. */
export interface Rights {
  uid: number;
  /** The primary group first; the agent's processes carry no supplementary groups (libuv drops them). */
  gids: readonly number[];
}

/** The part of a stat(2) answer the check reads. */
export interface Owned {
  uid: number;
  gid: number;
  mode: number;
}

export type Access = 'read' | 'write' | 'search';

const BIT: Record<Access, number> = { read: 4, write: 2, search: 1 };
const STICKY = 0o1000;

/** May `rights` read, write or (a directory) search this inode? Root may do all three. */
export function mayAccess(inode: Owned, rights: Rights, access: Access): boolean {
  if (rights.uid === 0) return true;
  const bit = BIT[access];
  if (inode.uid === rights.uid) return ((inode.mode >> 6) & bit) !== 0;
  if (rights.gids.includes(inode.gid)) return ((inode.mode >> 3) & bit) !== 0;
  return (inode.mode & bit) !== 0;
}

/**
 * May `rights` add, remove or replace the entry `entry` (undefined: none yet) in `dir`? Writing
 * and searching the directory, and in a sticky one (/tmp) owning the entry or the directory.
 */
export function mayChangeEntry(dir: Owned, entry: Owned | undefined, rights: Rights): boolean {
  if (!mayAccess(dir, rights, 'write') || !mayAccess(dir, rights, 'search')) return false;
  if (rights.uid === 0 || (dir.mode & STICKY) === 0 || entry === undefined) return true;
  return entry.uid === rights.uid || dir.uid === rights.uid;
}
