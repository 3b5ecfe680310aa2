/**
 * With an agent user, what the agent-server reads and writes on a caller's or the agent's behalf
 * (/api/file, /api/git/diff, the file editor) goes no further than the agent's own user could: a
 * link the agent planted in its workspace leads neither to the server's data nor to root's files.
 * Switching rights needs root, as the agent-server has in its container (and CI).
 */
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupAgentUser, type AgentUser } from '../../../src/agent-server/agent-user.js';
import { createFileEditorTool } from '../../../src/agent-server/agent/tools/index.js';
import { TestAgentServer } from '../../helpers/agent-server.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)('files with an agent user', () => {
  let root: string;
  let workspace: string;
  let secret: string;
  let app: string;
  let agentUser: AgentUser;
  let server: TestAgentServer;

  beforeAll(async () => {
    agentUser = await lookupAgentUser('nobody');
    root = await makeTempDir();
    await chmod(root, 0o755);
    workspace = join(root, 'workspace');
    await mkdir(workspace);
    await chown(workspace, agentUser.uid, agentUser.gid);
    secret = join(root, 'meta.json');
    await writeFile(secret, '{"api_key":"SECRET"}', { mode: 0o600 });
    app = join(root, 'app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), 'ROOT');
    await symlink(secret, join(workspace, 'to-secret'));
    await symlink(app, join(workspace, 'to-app'));
    server = await TestAgentServer.open(join(root, 'data'), { agentUser, workspaceDir: workspace });
  });
  afterAll(async () => {
    await server?.close();
    await removeDir(root);
  });

  const upload = (path: string, content: string) => {
    const form = new FormData();
    form.append('file', new Blob([content]), 'upload.bin');
    return server.server.app.request(`/api/file/upload?path=${encodeURIComponent(path)}`, { method: 'POST', body: form });
  };

  it("downloads what the agent may read, and refuses (403) a link to the server's secrets", async () => {
    await writeFile(join(workspace, 'notes.txt'), 'notes');
    const notes = await server.call('GET', `/api/file/download?path=${encodeURIComponent(join(workspace, 'notes.txt'))}`);
    expect([notes.status, await notes.text()]).toEqual([200, 'notes']);
    const leaked = await server.callJson('GET', `/api/file/download?path=${encodeURIComponent(join(workspace, 'to-secret'))}`);
    expect(leaked).toEqual({ status: 403, body: { detail: 'Permission denied' } });
  });

  it('uploads as the agent: its own files, and nothing through a link into root-owned places', async () => {
    expect((await upload(join(workspace, 'new/dir/file.txt'), 'hi')).status).toBe(200);
    for (const made of ['new', 'new/dir', 'new/dir/file.txt']) expect((await stat(join(workspace, made))).uid).toBe(agentUser.uid);
    expect((await upload(join(workspace, 'to-app/package.json'), 'PWNED')).status).toBe(403);
    expect((await upload(join(workspace, 'to-app/sub/x.js'), 'PWNED')).status).toBe(403);
    expect(await readFile(join(app, 'package.json'), 'utf8')).toBe('ROOT');
    expect(await readdir(app)).toEqual(['package.json']);
  });

  it("shows no diff of a link to what the agent may not read", async () => {
    const repo = join(workspace, 'repo');
    const asAgent = (...args: string[]) => execFileSync(args[0] as string, args.slice(1), { cwd: repo, uid: agentUser.uid, gid: agentUser.gid, env: { ...process.env, HOME: workspace } });
    await mkdir(repo);
    await chown(repo, agentUser.uid, agentUser.gid);
    asAgent('git', 'init', '-q');
    asAgent('ln', '-s', secret, 'leak');
    const diff = await server.callJson('GET', '/api/git/diff?path=repo/leak');
    expect(diff).toEqual({ status: 200, body: { modified: null, original: null } });
  });

  it("has the file editor refuse the server's secrets and root's files through links", async () => {
    const editor = createFileEditorTool({ workspaceDir: workspace, agentUser });
    const run = async (args: Record<string, unknown>) => {
      const parsed = editor.parseArguments(args);
      if (!parsed.ok) throw new Error(parsed.error);
      const observation = await editor.execute(parsed.action);
      return { error: observation.is_error, text: observation.content.map((item) => ('text' in item ? item.text : '')).join('') };
    };
    const viewed = await run({ command: 'view', path: join(workspace, 'to-secret') });
    expect(viewed.error).toBe(true);
    expect(viewed.text).not.toContain('SECRET');
    expect(viewed.text).toMatch(/outside the workspace/);
    // A hard link or a file root left in the workspace: inside it, and still not the agent's to read.
    await writeFile(join(workspace, 'root-only'), 'SECRET', { mode: 0o600 });
    const rootOnly = await run({ command: 'view', path: join(workspace, 'root-only') });
    expect(rootOnly).toEqual({ error: true, text: expect.stringMatching(/permission denied/) });
    await symlink(join(app, 'package.json'), join(workspace, 'pkg'));
    expect((await run({ command: 'str_replace', path: join(workspace, 'pkg'), old_str: 'ROOT', new_str: 'PWNED' })).error).toBe(true);
    expect(await readFile(join(app, 'package.json'), 'utf8')).toBe('ROOT');
    expect((await run({ command: 'create', path: join(workspace, 'made/by/editor.txt'), file_text: 'x' })).error).toBe(false);
    expect((await stat(join(workspace, 'made/by/editor.txt'))).uid).toBe(agentUser.uid);
    expect((await stat(join(workspace, 'made'))).uid).toBe(agentUser.uid);
  });
});
