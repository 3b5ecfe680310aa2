import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The file in DATA_DIR naming the one process using it. */
export const LOCK_FILE = 'sandbox-server.lock';
/** The holder touches the lock this often, so that a process on another host (a shared volume) can tell it lives. */
const HEARTBEAT_MS = 1_000;
/** A lock whose heartbeat stopped for this long, held from another host, was left by a process that died. */
const STALE_MS = 5_000;
/** How often a process waiting to tell whether another host's holder lives looks at its heartbeat. */
const WATCH_MS = 200;

/** Who holds a data directory, as its lock file says. */
export interface LockHolder {
  pid: number;
  /** The port it listens on; null while it starts on PORT=0, or for a command that does not listen. */
  port: number | null;
  host: string;
  /** The kernel's boot and the process's start (Linux), so that a pid reused after a crash is not taken for the holder. */
  boot: string | null;
  processStart: string | null;
  startedAt: string;
  /** What it is: `sandbox-server` or `sandbox-server resources`. */
  command: string;
}

/** Another process uses the data directory. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    const port = holder.port === null ? '' : ` on port ${holder.port}`;
    super(
      `DATA_DIR ${dir} is in use by ${holder.command} (pid ${holder.pid}${port}, host ${holder.host}, since ${holder.startedAt}): ` +
        'a PGlite data directory has one writer at a time. Stop that process, use another DATA_DIR, or set DATABASE_URL to run several replicas on PostgreSQL',
    );
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  /** Records the port actually listened on (PORT=0 picks one). */
  setPort(port: number): Promise<void>;
  /** Stops the heartbeat and removes the lock, if it is still ours. */
  release(): Promise<void>;
}

/**
 * Makes this process the one writer of `dir`, or throws DataDirInUseError naming the holder. A
 * lock whose holder is gone is taken over: on this host when its process no longer runs (checked
 * at once), from another host when its heartbeat stopped. Takeover renames the stale lock away
 * first, so that of two processes taking one over together, one wins and the other sees its lock.
 */
export async function lockDataDir(dir: string, options: { port: number | null; command: string }): Promise<DataDirLock> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const me: LockHolder = {
    pid: process.pid,
    port: options.port,
    host: hostname(),
    boot: readBoot(),
    processStart: processStartOf(process.pid),
    startedAt: new Date().toISOString(),
    command: options.command,
  };
  for (let attempt = 0; ; attempt++) {
    if (await create(path, me)) break;
    const held = await readHolder(path);
    if (held === undefined) continue;
    if (held === 'unreadable' || (await holderLives(path, held))) {
      if (held !== 'unreadable') throw new DataDirInUseError(dir, held);
      // Being written by a process starting this instant: its content follows at once.
      if (attempt > 20) throw new Error(`DATA_DIR ${dir} has an unreadable lock file ${path}; remove it if no sandbox-server uses this directory`);
      await sleep(50);
      continue;
    }
    await takeOver(path, held);
  }
  let current = me;
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => undefined);
  }, HEARTBEAT_MS).unref();
  return {
    async setPort(port) {
      current = { ...current, port };
      const temporary = `${path}.${randomBytes(4).toString('hex')}`;
      await writeFile(temporary, JSON.stringify(current));
      await rename(temporary, path);
    },
    async release() {
      clearInterval(heartbeat);
      const held = await readHolder(path);
      if (held !== undefined && held !== 'unreadable' && held.pid === current.pid && held.startedAt === current.startedAt) {
        await unlink(path).catch(() => undefined);
      }
    },
  };
}

/** Creates the lock with its content complete (a hard link of a written file), or false when one exists. */
async function create(path: string, holder: LockHolder): Promise<boolean> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, JSON.stringify(holder));
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** The holder the lock names; undefined when there is no lock (any more). */
async function readHolder(path: string): Promise<LockHolder | 'unreadable' | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as LockHolder;
    return typeof parsed.pid === 'number' ? parsed : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/**
 * Whether the lock's holder still runs. On this host (same kernel boot) its pid says so at once,
 * and its start time tells it from a process that reused the pid. From elsewhere, only its
 * heartbeat can: it lives if the lock is touched within STALE_MS.
 */
async function holderLives(path: string, holder: LockHolder): Promise<boolean> {
  const boot = readBoot();
  if (holder.host === hostname() && (holder.boot === null || boot === null || holder.boot === boot)) {
    if (!processRuns(holder.pid)) return false;
    const start = processStartOf(holder.pid);
    return holder.processStart === null || start === null || start === holder.processStart;
  }
  const first = await touchedAt(path);
  while (first !== undefined && Date.now() - first < STALE_MS) {
    await sleep(WATCH_MS);
    const now = await touchedAt(path);
    if (now === undefined) return false;
    if (now !== first) return true;
  }
  return first !== undefined && Date.now() - first < STALE_MS;
}

/**
 * Moves a stale lock aside. If what was moved is not the lock judged stale (another process took it
 * over in between), it is put back and the caller looks again.
 */
async function takeOver(path: string, stale: LockHolder): Promise<void> {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readHolder(aside);
  if (moved !== undefined && moved !== 'unreadable' && (moved.pid !== stale.pid || moved.startedAt !== stale.startedAt)) {
    await link(aside, path).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}

async function touchedAt(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readBoot(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

/** The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or null off Linux. */
function processStartOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
