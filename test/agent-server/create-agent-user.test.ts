import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentUserFromPasswd } from '../../src/agent-server/agent-user.js';
import { ensureAgentUser, ensurePrivateDataDir, ensureWorkspace, freeId } from '../../src/agent-server/create-agent-user.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

/** The files of an image without the agent user, in a temporary directory (the test runs as root, as the agent-server does). */
describe('creating the agent user in an image that lacks it', () => {
  let dir: string;
  let paths: { passwd: string; group: string; shadow: string; homes: string };

  beforeEach(async () => {
    dir = await makeTempDir('agent-user-');
    paths = { passwd: join(dir, 'etc/passwd'), group: join(dir, 'etc/group'), shadow: join(dir, 'etc/shadow'), homes: join(dir, 'home') };
    await mkdir(join(dir, 'etc'));
  });
  afterEach(() => removeDir(dir));

  it('adds the user and its group with the first free id, a locked password and a home of its own, once', async () => {
    await writeFile(paths.passwd, 'root:x:0:0:root:/root:/bin/bash\nnode:x:1000:1000::/home/node:/bin/bash');
    await writeFile(paths.group, 'root:x:0:\nnode:x:1000:\nusers:x:1001:\n');
    await writeFile(paths.shadow, 'root:*:19000:0:99999:7:::\n');

    expect(await ensureAgentUser('openhands', paths)).toBe(true);
    expect(await ensureAgentUser('openhands', paths)).toBe(false);

    const passwd = await readFile(paths.passwd, 'utf8');
    expect(passwd.split('\n').filter((line) => line.startsWith('openhands:'))).toHaveLength(1);
    expect(agentUserFromPasswd('openhands', passwd)).toEqual({ name: 'openhands', uid: 1002, gid: 1002, home: join(paths.homes, 'openhands') });
    expect(agentUserFromPasswd('node', passwd)).toMatchObject({ uid: 1000 });
    expect(await readFile(paths.group, 'utf8')).toContain('\nopenhands:x:1002:\n');
    expect(await readFile(paths.shadow, 'utf8')).toMatch(/\nopenhands:!:\d+::::::\n$/);
    const home = await stat(join(paths.homes, 'openhands'));
    expect({ uid: home.uid, gid: home.gid, dir: home.isDirectory() }).toEqual({ uid: 1002, gid: 1002, dir: true });
  });

  it('creates /etc/passwd and /etc/group in an image that has none, and no shadow file', async () => {
    expect(await ensureAgentUser('openhands', paths)).toBe(true);
    expect(agentUserFromPasswd('openhands', await readFile(paths.passwd, 'utf8'))).toMatchObject({ uid: 1000, gid: 1000 });
    await expect(stat(paths.shadow)).rejects.toThrow(/ENOENT/);
  });

  it('gives the agent an empty workspace of root, and leaves one the image filled as it is', async () => {
    const empty = join(dir, 'workspace');
    const filled = join(dir, 'project');
    await mkdir(filled);
    await writeFile(join(filled, 'main.py'), 'print(1)\n');
    await ensureWorkspace(empty, { uid: 1000, gid: 1000 });
    await ensureWorkspace(filled, { uid: 1000, gid: 1000 });
    expect((await stat(empty)).uid).toBe(1000);
    expect((await stat(filled)).uid).toBe(0);
  });

  it('makes the data directory private', async () => {
    const data = join(dir, 'data');
    await mkdir(data, { mode: 0o755 });
    await ensurePrivateDataDir(data);
    expect((await stat(data)).mode & 0o777).toBe(0o700);
  });

  it('takes the lowest free id from 1000', () => {
    expect(freeId(new Set([0, 1000, 1001, 1003]))).toBe(1002);
    expect(freeId(new Set())).toBe(1000);
  });
});
