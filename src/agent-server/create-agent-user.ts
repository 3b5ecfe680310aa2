/**
 * Makes an image the agent-server was brought into (the control plane mounts it into any image)
 * ready for it: the agent user, its home and its workspace, which our own image has from its build.
 * Run as root, before anything else, by `--create-agent-user`: node's file calls only, since the
 * image may have no useradd.
 */
import { appendFile, chmod, chown, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';
import { agentUserFromPasswd } from './agent-user.js';

export interface SystemPaths {
  passwd: string;
  group: string;
  /** Absent on images without shadow passwords. */
  shadow: string;
  /** Where homes are made. */
  homes: string;
}

const SYSTEM_PATHS: SystemPaths = { passwd: '/etc/passwd', group: '/etc/group', shadow: '/etc/shadow', homes: '/home' };

/** The first unprivileged id (Debian's FIRST_UID). */
const FIRST_ID = 1000;
/** Ids above this are Debian's reserved range and nobody's (65534). */
const LAST_ID = 59_999;

/** The lowest id from FIRST_ID that none of `taken` holds; undefined when the range is full. */
export function freeId(taken: ReadonlySet<number>): number | undefined {
  for (let id = FIRST_ID; id <= LAST_ID; id++) if (!taken.has(id)) return id;
  return undefined;
}

/** The numbers in field `index` of a passwd- or group-style text. */
function idsIn(text: string, index: number): Set<number> {
  const ids = new Set<number>();
  for (const line of text.split('\n')) {
    const value = Number(line.split(':')[index]);
    if (line.trim() !== '' && Number.isInteger(value)) ids.add(value);
  }
  return ids;
}

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/** Appends `line` as a line of its own, whether or not the file ends with a newline. */
async function appendLine(path: string, text: string, line: string): Promise<void> {
  await appendFile(path, `${text === '' || text.endsWith('\n') ? '' : '\n'}${line}\n`);
}

/**
 * Adds the user `name` (and its group of the same name) when the image lacks it: one free id for
 * both, a locked password, home /home/<name> of its own, bash as its shell. An existing user is left
 * as the image made it. Answers whether it was created.
 */
export async function ensureAgentUser(name: string, files: SystemPaths = SYSTEM_PATHS): Promise<boolean> {
  await mkdir(dirname(files.passwd), { recursive: true });
  const passwd = await readOrEmpty(files.passwd);
  if (agentUserFromPasswd(name, passwd)) return false;
  const group = await readOrEmpty(files.group);
  const id = freeId(new Set([...idsIn(passwd, 2), ...idsIn(group, 2)]));
  if (id === undefined) throw new Error(`no free user id between ${FIRST_ID} and ${LAST_ID} for the agent user ${name}`);
  const home = join(files.homes, name);
  await appendLine(files.passwd, passwd, `${name}:x:${id}:${id}::${home}:/bin/bash`);
  if (!group.split('\n').some((line) => line.split(':')[0] === name)) await appendLine(files.group, group, `${name}:x:${id}:`);
  const shadow = await readOrEmpty(files.shadow);
  if (shadow !== '') await appendLine(files.shadow, shadow, `${name}:!:${Math.floor(Date.now() / 86_400_000)}::::::`);
  await mkdir(home, { recursive: true, mode: 0o755 });
  await chown(home, id, id);
  return true;
}

/**
 * Gives the workspace to the agent when it is root's and empty: a directory the engine made for the
 * working directory the image lacked. One the image filled is left as the image made it.
 */
export async function ensureWorkspace(dir: string, user: { uid: number; gid: number }): Promise<void> {
  await mkdir(dir, { recursive: true });
  const info = await stat(dir);
  if (info.uid === 0 && (await readdir(dir)).length === 0) await chown(dir, user.uid, user.gid);
}

/** The data directory is the agent-server's alone, as our image makes it (chmod 700). */
export async function ensurePrivateDataDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await stat(dir);
  if ((info.mode & (constants.S_IRWXG | constants.S_IRWXO)) !== 0) await chmod(dir, 0o700);
}
