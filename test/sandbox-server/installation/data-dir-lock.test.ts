import type { ChildProcess } from 'node:child_process';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, type LockHolder, lockDataDir } from '../../../src/sandbox-server/installation/data-dir-lock.js';
import { ensureBuilt } from '../../helpers/build.js';
import { killProcess, spawnControlPlane } from '../../helpers/control-plane-process.js';
import { connectDocker, testInstanceId } from '../../helpers/docker.js';
import { freePort, runBuiltControlPlane } from '../../helpers/processes.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const docker = await connectDocker();

/** Two built control planes on one PGlite DATA_DIR: the second is refused while the first runs, and takes over once it was SIGKILLed. */
describe.runIf(docker)('one writer per PGlite data directory', { timeout: 180_000 }, () => {
  const instanceId = testInstanceId();
  let dataDir: string;
  let first: ChildProcess | undefined;
  let second: ChildProcess | undefined;
  // Empty counts as unset: PGlite, whatever the suite's DATABASE_URL.
  const env = () => ({ DATA_DIR: dataDir, DATABASE_URL: '', SANDBOX_SERVER_INSTANCE: instanceId });

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = await makeTempDir('data-dir-lock-');
  }, 120_000);

  afterAll(async () => {
    await killProcess(first);
    await killProcess(second);
    if (dataDir) await removeDir(dataDir);
  });

  it('refuses a second process naming the holder, and takes over the lock a SIGKILLed holder left', async () => {
    const firstPort = await freePort();
    first = await spawnControlPlane(firstPort, env());

    const secondPort = await freePort();
    const started = performance.now();
    const refused = await runBuiltControlPlane([], { ...env(), PORT: String(secondPort), LOG_LEVEL: 'warn' }, 30_000);
    console.log(`second process on the data directory refused after ${Math.round(performance.now() - started)} ms`);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`pid ${first.pid}`);
    expect(refused.stderr).toContain(`port ${firstPort}`);
    expect(refused.stderr).toContain(dataDir);

    const command = await runBuiltControlPlane(['resources', 'ls'], env(), 30_000);
    expect(command.code).toBe(1);
    expect(command.stderr).toContain(`pid ${first.pid}`);

    await killProcess(first);
    second = await spawnControlPlane(secondPort, env());
    const holder = JSON.parse(await readFile(join(dataDir, LOCK_FILE), 'utf8')) as LockHolder;
    expect(holder).toMatchObject({ pid: second.pid, port: secondPort });
  });
});

describe('the data directory lock of a holder on another host', () => {
  let dir: string;
  afterEach(async () => {
    if (dir) await removeDir(dir);
  });

  async function writeForeignLock(touchedMsAgo: number): Promise<string> {
    dir = await makeTempDir('data-dir-lock-');
    const path = join(dir, LOCK_FILE);
    const holder: LockHolder = { pid: 1, port: 3000, host: 'another-host', boot: 'another-boot', processStart: '1', startedAt: new Date().toISOString(), command: 'sandbox-server' };
    await writeFile(path, JSON.stringify(holder));
    const touched = new Date(Date.now() - touchedMsAgo);
    await utimes(path, touched, touched);
    return path;
  }

  it('is taken over once its heartbeat has stopped', async () => {
    await writeForeignLock(60_000);
    const lock = await lockDataDir(dir, { port: 4000, command: 'test' });
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, port: 4000 });
    await lock.release();
  });

  it('is refused while its heartbeat goes on, naming the holder', async () => {
    const path = await writeForeignLock(0);
    const heartbeat = setInterval(() => void utimes(path, new Date(), new Date()), 300);
    try {
      const refusal = await lockDataDir(dir, { port: 4000, command: 'test' }).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(DataDirInUseError);
      expect((refusal as Error).message).toContain('pid 1 on port 3000, host another-host');
    } finally {
      clearInterval(heartbeat);
    }
  });
});
