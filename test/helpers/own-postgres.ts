import { execFile } from 'node:child_process';
import { chown } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';
import { makeTempDir, removeDir } from './temp-dir.js';

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of the test's own, in a temp dir on a free port, that the test may stop and
 * start at will: the machine's shared server is never restarted. Runs the binaries of the installed
 * major version as the `postgres` user (the tests run as root in CI).
 */
export interface OwnPostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and deletes its files. */
  destroy(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = await postgresBinDir();
  const dir = await makeTempDir('own-postgres-');
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  await chown(dir, Number(uid), Number(gid));
  const data = join(dir, 'data');
  const asPostgres = (program: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args]);
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const start = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -h 127.0.0.1 -k ${dir} -c fsync=off`, 'start']);
  };
  const stop = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-w', '-m', 'fast', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      await stop().catch(() => undefined);
      await removeDir(dir);
    },
  };
}

async function postgresBinDir(): Promise<string> {
  const { stdout } = await run('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1']);
  const dir = stdout.trim();
  if (!dir) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  return dir;
}
