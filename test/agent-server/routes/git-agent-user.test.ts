/**
 * /api/git runs git in the agent's workspace, whose repository configuration the agent writes: a
 * `core.fsmonitor` (or a filter, a diff driver...) there is a program git runs. With an agent user,
 * the agent-server (root) must run git as that user, so such a program gets the agent's own rights,
 * never root's. Switching users needs root, as the agent-server has in its container (and CI).
 */
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupAgentUser, type AgentUser } from '../../../src/agent-server/agent-user.js';
import { TestAgentServer } from '../../helpers/agent-server.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)('/api/git with an agent user', () => {
  let root: string;
  let workspace: string;
  let repo: string;
  let marker: string;
  let agentUser: AgentUser;
  let server: TestAgentServer;

  /** Runs a command as the agent would in its terminal: as its user. */
  const asAgent = (command: string, ...args: string[]) =>
    execFileSync(command, args, { cwd: repo, uid: agentUser.uid, gid: agentUser.gid, env: { ...process.env, HOME: agentUser.home } });

  beforeAll(async () => {
    agentUser = await lookupAgentUser('nobody');
    root = await makeTempDir();
    await chmod(root, 0o755);
    workspace = join(root, 'workspace');
    repo = join(workspace, 'repo');
    marker = join(workspace, 'fsmonitor-ran-as');
    await mkdir(workspace);
    await chown(workspace, agentUser.uid, agentUser.gid);
    await mkdir(repo);
    await chown(repo, agentUser.uid, agentUser.gid);

    const git = (...args: string[]) => asAgent('git', '-c', 'user.email=agent@example.com', '-c', 'user.name=agent', ...args);
    git('init', '-q');
    asAgent('sh', '-c', 'printf "line1\\n" > tracked.txt');
    git('add', 'tracked.txt');
    git('commit', '-qm', 'first');
    asAgent('sh', '-c', 'printf "line1\\nline2\\n" > tracked.txt && printf "hello\\n" > new.txt');
    // The agent's trap: a file system monitor that records who ran it (and reports no change, so
    // git falls back to looking at the files itself).
    const monitor = join(workspace, 'monitor.sh');
    asAgent('sh', '-c', `printf '#!/bin/sh\\nid -u >> ${marker}\\n' > ${monitor} && chmod 755 ${monitor}`);
    git('config', 'core.fsmonitor', monitor);

    server = await TestAgentServer.open(join(root, 'data'), { agentUser, workspaceDir: workspace });
  });
  afterAll(async () => {
    await server?.close();
    await removeDir(root);
  });

  async function changesAndDiff() {
    await rm(marker, { force: true });
    return {
      changes: await server.callJson('GET', '/api/git/changes?path=repo'),
      diff: await server.callJson('GET', '/api/git/diff?path=repo/tracked.txt'),
    };
  }

  it("answers for a repository the agent owns, running what its configuration names as the agent's user", async () => {
    expect(await changesAndDiff()).toEqual({
      changes: {
        status: 200,
        body: [
          { path: 'new.txt', status: 'ADDED' },
          { path: 'tracked.txt', status: 'UPDATED' },
        ],
      },
      diff: { status: 200, body: { original: 'line1\n', modified: 'line1\nline2\n' } },
    });
    const ranAs = new Set((await readFile(marker, 'utf8')).trim().split('\n'));
    expect(ranAs).toEqual(new Set([String(agentUser.uid)]));
  });

  it('never runs it as root, even where root trusts every directory (safe.directory=*)', async () => {
    const trusted = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' };
    Object.assign(process.env, trusted);
    try {
      expect((await changesAndDiff()).changes.status).toBe(200);
    } finally {
      for (const name of Object.keys(trusted)) delete process.env[name];
    }
    const ranAs = new Set((await readFile(marker, 'utf8')).trim().split('\n'));
    expect(ranAs).toEqual(new Set([String(agentUser.uid)]));
  });
});
