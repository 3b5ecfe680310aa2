/**
 * Ending a terminal for good: the shell, everything it started, and everything still in its
 * terminal's sessions, found in /proc. A job-control shell gives each job a process group of its
 * own, so killing one group would leave the jobs running; a process reparented to init after its
 * parent died keeps its session. Processes that left the session on purpose (setsid, nohup with a
 * new session) are let be, as a terminal closing would.
 */
import { readdir, readFile } from 'node:fs/promises';

interface ProcessEntry {
  pid: number;
  ppid: number;
  session: number;
}

/** How long a kill waits for its processes to be gone (SIGKILL is delivered asynchronously). */
const GONE_WITHIN_MS = 2_000;

/** SIGKILLs `rootPid`, its descendants, and the other members of their sessions; resolves once they are gone. */
export async function killProcessTree(rootPid: number): Promise<void> {
  const processes = await listProcesses();
  // The agent-server's own session is never a terminal's.
  const own = processes.find((p) => p.pid === process.pid)?.session;
  const doomed = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    const sessions = new Set([...doomed].flatMap((pid) => processes.filter((p) => p.pid === pid).map((p) => p.session)));
    for (const entry of processes) {
      if (doomed.has(entry.pid) || entry.pid === 1) continue;
      if (doomed.has(entry.ppid) || (sessions.has(entry.session) && entry.session !== 0 && entry.session !== own)) {
        doomed.add(entry.pid);
        grew = true;
      }
    }
  }
  for (const pid of doomed) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  const deadline = Date.now() + GONE_WITHIN_MS;
  while (Date.now() < deadline && (await Promise.all([...doomed].map(isRunning))).some(Boolean)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A process that exists and is not a zombie waiting for its parent. */
async function isRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

async function listProcesses(): Promise<ProcessEntry[]> {
  const names = await readdir('/proc').catch(() => []);
  const entries = await Promise.all(
    names.filter((name) => /^\d+$/.test(name)).map(async (name) => parseStat(await readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''))),
  );
  return entries.filter((entry) => entry !== null);
}

/** `pid (comm) state ppid pgrp session ...`: comm may hold spaces and parentheses, so fields are read after its last `)`. */
function parseStat(stat: string): ProcessEntry | null {
  const close = stat.lastIndexOf(')');
  if (close === -1) return null;
  const fields = stat.slice(close + 2).split(' ');
  const pid = Number.parseInt(stat, 10);
  const ppid = Number(fields[1]);
  const session = Number(fields[3]);
  return Number.isInteger(pid) && Number.isInteger(ppid) && Number.isInteger(session) ? { pid, ppid, session } : null;
}
