/**
 * AgentFs acts with the agent user's rights even though the agent-server is root: it never reads or
 * writes what `nobody` could not, whatever symlinks the agent plants or swaps while it works.
 * Switching rights needs root, as the agent-server has in its container (and CI).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lookupAgentUser, type AgentUser } from '../../../src/agent-server/agent-user.js';
import { createAgentFs, NOT_REGULAR, OutsideError, type AgentFs } from '../../../src/agent-server/agent-fs/index.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)('AgentFs with an agent user', () => {
  let agent: AgentUser;
  let root: string;
  let workspace: string;
  let secret: string;
  let rootDir: string;
  let files: AgentFs;

  beforeAll(async () => {
    agent = await lookupAgentUser('nobody');
  });

  beforeEach(async () => {
    root = await fs.realpath(await makeTempDir());
    await fs.chmod(root, 0o755);
    workspace = path.join(root, 'workspace');
    await fs.mkdir(workspace);
    await fs.chown(workspace, agent.uid, agent.gid);
    secret = path.join(root, 'meta.json');
    await fs.writeFile(secret, 'SECRET', { mode: 0o600 });
    rootDir = path.join(root, 'app');
    await fs.mkdir(rootDir);
    await fs.writeFile(path.join(rootDir, 'package.json'), 'ROOT', { mode: 0o644 });
    files = createAgentFs({ user: agent });
  });

  afterEach(async () => {
    await removeDir(root);
  });

  const inWorkspace = (name: string) => path.join(workspace, name);
  const codeOf = (promise: Promise<unknown>) => promise.then(() => 'ok', (error: NodeJS.ErrnoException) => error.code);

  it('reads what the agent may read, links followed, and refuses what it may not', async () => {
    await fs.writeFile(inWorkspace('a.txt'), 'hello');
    await fs.symlink('a.txt', inWorkspace('link'));
    expect((await files.readFile(inWorkspace('link'))).toString()).toBe('hello');
    await fs.symlink(secret, inWorkspace('to-secret'));
    expect(await codeOf(files.readFile(inWorkspace('to-secret')))).toBe('EACCES');
    expect(await codeOf(files.readFile(secret))).toBe('EACCES');
    expect(await codeOf(files.openFile(inWorkspace('to-secret')))).toBe('EACCES');
    expect((await files.stat(inWorkspace('to-secret'))).size).toBe(6);
  });

  it('refuses to write a root file through a link, and leaves it as it was', async () => {
    await fs.symlink(path.join(rootDir, 'package.json'), inWorkspace('t'));
    expect(await codeOf(files.writeFile(inWorkspace('t'), 'PWNED'))).toBe('EACCES');
    await fs.symlink(rootDir, inWorkspace('d'));
    expect(await codeOf(files.writeFile(inWorkspace('d/new.js'), 'PWNED'))).toBe('EACCES');
    expect(await codeOf(files.replaceFile(inWorkspace('d/package.json'), Readable.from(['PWNED'])))).toBe('EACCES');
    expect(await codeOf(files.makeDirs(inWorkspace('d/sub')))).toBe('EACCES');
    expect(await fs.readFile(path.join(rootDir, 'package.json'), 'utf8')).toBe('ROOT');
    expect(await fs.readdir(rootDir)).toEqual(['package.json']);
  });

  it('gives what it makes to the agent: files, parents and replaced files', async () => {
    expect(await files.writeFile(inWorkspace('x/y/z.txt'), 'new', { makeParents: true })).toEqual({ created: true });
    for (const made of ['x', 'x/y', 'x/y/z.txt']) expect((await fs.stat(inWorkspace(made))).uid).toBe(agent.uid);
    expect(await files.writeFile(inWorkspace('x/y/z.txt'), 'again')).toEqual({ created: false });
    expect(await codeOf(files.writeFile(inWorkspace('x/y/z.txt'), 'no', { exclusive: true }))).toBe('EEXIST');
    await files.replaceFile(inWorkspace('up/load.bin'), Readable.from([Buffer.from('bytes')]), { makeParents: true });
    expect(await fs.readFile(inWorkspace('up/load.bin'), 'utf8')).toBe('bytes');
    expect((await fs.stat(inWorkspace('up/load.bin'))).uid).toBe(agent.uid);
    await files.makeDirs(inWorkspace('m/n'));
    expect((await fs.stat(inWorkspace('m/n'))).uid).toBe(agent.uid);
    expect((await files.readDir(inWorkspace('.'))).map((e) => `${e.name}:${e.type}`).sort()).toEqual(['m:directory', 'up:directory', 'x:directory']);
  });

  it('removes a link itself, never its target', async () => {
    await fs.symlink(path.join(rootDir, 'package.json'), inWorkspace('t'));
    await files.removeFile(inWorkspace('t'));
    expect(await fs.readFile(path.join(rootDir, 'package.json'), 'utf8')).toBe('ROOT');
    expect(await codeOf(files.removeFile(path.join(rootDir, 'package.json')))).toBe('EACCES');
  });

  it('keeps a confined AgentFs inside its tree, links followed', async () => {
    const confined = createAgentFs({ user: agent, within: workspace });
    await fs.mkdir(path.join(root, 'elsewhere'), { mode: 0o777 });
    await fs.chmod(path.join(root, 'elsewhere'), 0o777);
    await fs.symlink(path.join(root, 'elsewhere'), inWorkspace('out'));
    await expect(confined.writeFile(inWorkspace('out/new/file'), 'x', { makeParents: true })).rejects.toBeInstanceOf(OutsideError);
    await expect(confined.readFile(path.join(root, 'elsewhere'))).rejects.toBeInstanceOf(OutsideError);
    expect(await fs.readdir(path.join(root, 'elsewhere'))).toEqual([]);
    await confined.writeFile(inWorkspace('in.txt'), 'inside');
    expect(await fs.readFile(inWorkspace('in.txt'), 'utf8')).toBe('inside');
  });

  it('refuses a FIFO at once rather than waiting for a writer', async () => {
    await new Promise((resolve, reject) => execFile('mkfifo', [inWorkspace('pipe')], (error) => (error ? reject(error) : resolve(undefined))));
    expect(await codeOf(files.readFile(inWorkspace('pipe')))).toBe(NOT_REGULAR);
  });

  it('loses no race to an agent swapping a file and a link to root files', async () => {
    const target = inWorkspace('t');
    await fs.writeFile(target, 'mine');
    await fs.chown(target, agent.uid, agent.gid);
    const swapper = startSwapper(agent, workspace, secret, path.join(rootDir, 'package.json'));
    try {
      let reads = 0;
      for (let i = 0; i < 300; i += 1) {
        const read = await files.readFile(target).then((bytes) => bytes.toString(), () => undefined);
        expect(read).not.toBe('SECRET');
        // The agent's own file (maybe mid-write), or the root file anyone may read; never the secret.
        expect([undefined, '', 'mine', 'mine\n', 'ROOT']).toContain(read);
        if (read !== undefined) reads += 1;
        await files.writeFile(target, 'mine').catch(() => undefined);
      }
      expect(reads).toBeGreaterThan(0);
    } finally {
      // The whole group: a SIGKILL to bash alone leaves its last `mv` writing while the workspace is removed.
      const exited = new Promise((resolve) => swapper.once('exit', resolve));
      process.kill(-(swapper.pid ?? 0), 'SIGKILL');
      await exited;
    }
    expect(await fs.readFile(path.join(rootDir, 'package.json'), 'utf8')).toBe('ROOT');
    expect(await fs.readFile(secret, 'utf8')).toBe('SECRET');
  });
});

/** As the agent: swaps `t` in `dir` between its own file and links to `secret` and `rootFile`, atomically, forever. */
function startSwapper(agent: AgentUser, dir: string, secret: string, rootFile: string): ChildProcess {
  const script = `while :; do ln -sfn ${secret} l1; mv -T l1 t; echo mine > f; mv -T f t; ln -sfn ${rootFile} l2; mv -T l2 t; echo mine > f; mv -T f t; done`;
  return spawn('bash', ['-c', script], { cwd: dir, uid: agent.uid, gid: agent.gid, stdio: 'ignore', detached: true });
}

describe('AgentFs with this process\'s own rights', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.realpath(await makeTempDir());
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  it('reads, writes and lists as the process itself would', async () => {
    const files = createAgentFs();
    await files.writeFile(path.join(dir, 'a/b.txt'), 'text', { makeParents: true });
    expect((await files.readFile(path.join(dir, 'a/b.txt'))).toString()).toBe('text');
    expect(await files.readDir(path.join(dir, 'a'))).toEqual([{ name: 'b.txt', type: 'file' }]);
    await expect(files.readFile(path.join(dir, 'a'))).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(files.readFile(path.join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(files.readFile('relative')).rejects.toMatchObject({ code: 'EINVAL' });
    await fs.symlink('loop', path.join(dir, 'loop'));
    await expect(files.readFile(path.join(dir, 'loop'))).rejects.toMatchObject({ code: 'ELOOP' });
  });
});
