/**
 * POST /api/file/unpack (our extension): a tar archive streamed in is unpacked as the agent into a
 * new directory, whole or not at all; a destination that holds something is left alone. Switching
 * to the agent user needs root, as the agent-server has in its container (and CI).
 */
import { chmod, chown, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupAgentUser, type AgentUser } from '../../../src/agent-server/agent-user.js';
import { tarOf } from '../../../src/sandbox-server/runtime/tar.js';
import { TestAgentServer } from '../../helpers/agent-server.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const asRoot = process.getuid?.() === 0;
/** Smaller than the archive below: an unpacked archive is not held to the request limit. */
const BODY_LIMIT = 64 * 1024;

const ARCHIVE = tarOf([
  { path: './', mode: 0o755 },
  { path: './.git/', mode: 0o755 },
  { path: './.git/config', mode: 0o644, content: Buffer.from('[core]\n') },
  { path: './run.sh', mode: 0o755, content: Buffer.from('#!/bin/sh\necho ran\n') },
  { path: './big.txt', mode: 0o644, content: Buffer.alloc(4 * BODY_LIMIT, 'x') },
]);

/** The archive in pieces, as a stream arrives: chunked, with no length given. */
function streamOf(bytes: Buffer, pieceBytes = 16 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(new Uint8Array(bytes.subarray(offset, offset + pieceBytes)));
      offset += pieceBytes;
    },
  });
}

describe.skipIf(!asRoot)('unpacking an archive into the sandbox', () => {
  let root: string;
  let workspace: string;
  let agentUser: AgentUser;
  let server: TestAgentServer;

  beforeAll(async () => {
    agentUser = await lookupAgentUser('nobody');
    root = await makeTempDir();
    await chmod(root, 0o755);
    workspace = join(root, 'workspace');
    await mkdir(workspace);
    await chown(workspace, agentUser.uid, agentUser.gid);
    server = await TestAgentServer.open(join(root, 'data'), { agentUser, workspaceDir: workspace, maxRequestBodyBytes: BODY_LIMIT });
  });
  afterAll(async () => {
    await server?.close();
    await removeDir(root);
  });

  const unpack = (path: string, body: ReadableStream<Uint8Array> | string | undefined = streamOf(ARCHIVE)) =>
    server.callJson('POST', `/api/file/unpack?path=${encodeURIComponent(path)}`, { body, headers: { 'content-type': 'application/x-tar' } });

  it('unpacks a streamed archive into a new directory, its parents made, every file the agent own with its mode', async () => {
    const destination = join(workspace, 'projects', 'app');
    expect(await unpack(destination)).toEqual({ status: 200, body: { success: true } });
    expect((await readdir(destination)).sort()).toEqual(['.git', 'big.txt', 'run.sh']);
    expect(await readFile(join(destination, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect((await stat(join(destination, 'big.txt'))).size).toBe(4 * BODY_LIMIT);
    for (const path of [destination, join(destination, '.git'), join(destination, 'run.sh'), join(workspace, 'projects')]) {
      expect({ path, uid: (await stat(path)).uid }).toEqual({ path, uid: agentUser.uid });
    }
    expect((await stat(join(destination, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(destination)).mode & 0o777).toBe(0o755);
  });

  it('fills an empty directory, and leaves one that holds something as it was (409)', async () => {
    const empty = join(workspace, 'empty');
    await mkdir(empty);
    await chown(empty, agentUser.uid, agentUser.gid);
    expect((await unpack(empty)).status).toBe(200);
    expect(await readFile(join(empty, 'run.sh'), 'utf8')).toContain('echo ran');

    const taken = join(workspace, 'taken');
    await mkdir(taken);
    await writeFile(join(taken, 'mine.txt'), 'mine');
    expect(await unpack(taken)).toEqual({ status: 409, body: { detail: `${taken} already exists and is not an empty directory` } });
    expect(await readdir(taken)).toEqual(['mine.txt']);
    await writeFile(join(workspace, 'a-file'), 'file');
    expect((await unpack(join(workspace, 'a-file'))).status).toBe(409);
    expect(await readFile(join(workspace, 'a-file'), 'utf8')).toBe('file');
  });

  it('leaves nothing behind for an archive cut short or not an archive (422)', async () => {
    const cut = join(workspace, 'cut');
    const answer = await unpack(cut, streamOf(ARCHIVE.subarray(0, 2048 + 700)));
    expect(answer.status).toBe(422);
    expect(JSON.stringify(answer.body)).toMatch(/The archive could not be unpacked: .*tar/);
    expect((await unpack(join(workspace, 'garbage'), 'not a tar archive at all')).status).toBe(422);
    expect((await readdir(workspace)).filter((name) => name === 'cut' || name === 'garbage' || name.startsWith('.unpack-'))).toEqual([]);
  });

  it("refuses a place the agent may not write (403), a relative path and a missing body (422)", async () => {
    const rootsOwn = join(root, 'roots-own');
    await mkdir(rootsOwn, { mode: 0o755 });
    const refused = await unpack(join(rootsOwn, 'app'));
    expect(refused.status).toBe(403);
    expect(await readdir(rootsOwn)).toEqual([]);
    expect((await unpack('relative/app')).status).toBe(422);
    expect((await server.callJson('POST', `/api/file/unpack?path=${encodeURIComponent(join(workspace, 'none'))}`)).status).toBe(422);
    // A JSON body (the fuzz suite found it answered 500: the validators had read it) is no archive.
    const json = await server.callJson('POST', `/api/file/unpack?path=${encodeURIComponent(join(workspace, 'json'))}`, { body: JSON.stringify({ data: 'x' }), headers: { 'content-type': 'application/json' } });
    expect(json).toEqual({ status: 422, body: { detail: [{ loc: ['header', 'content-type'], msg: 'The body must be a tar archive sent as application/x-tar', type: 'value_error' }] } });
  });
});
