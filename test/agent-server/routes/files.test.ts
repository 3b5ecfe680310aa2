import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFileRoutes } from '../../../src/agent-server/routes/files/index.js';
import { createApiApp } from '../../../src/http/app.js';
import { readAnswer, ValidationErrorSchema } from '../../helpers/answer.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

let root: string;
const app = createApiApp();
registerFileRoutes(app, undefined);

beforeAll(async () => {
  root = await makeTempDir();
});
afterAll(async () => {
  await removeDir(root);
});

function upload(path: string, content: Blob | string, field = 'file') {
  const form = new FormData();
  form.append(field, content instanceof Blob ? content : new Blob([content]), 'upload.bin');
  return app.request(`/api/file/upload?path=${encodeURIComponent(path)}`, { method: 'POST', body: form });
}

function download(path: string) {
  return app.request(`/api/file/download?path=${encodeURIComponent(path)}`);
}

describe('POST /api/file/upload', () => {
  it('writes the file, creating parent directories, and answers {success: true}', async () => {
    const target = join(root, 'a', 'b', 'notes.txt');
    const response = await upload(target, 'hello\n');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true });
    expect(await readFile(target, 'utf8')).toBe('hello\n');
  });

  it('replaces an existing file whole and leaves no temporary file behind', async () => {
    const target = join(root, 'replace.txt');
    await writeFile(target, 'old content that is longer');
    expect((await upload(target, 'new')).status).toBe(200);
    expect(await readFile(target, 'utf8')).toBe('new');
    expect((await readdir(root)).filter((name) => name.includes('.upload-'))).toEqual([]);
  });

  it('keeps binary content byte for byte', async () => {
    const bytes = new Uint8Array(256 * 1024).map((_, i) => (i * 7) % 256);
    const target = join(root, 'binary.bin');
    expect((await upload(target, new Blob([bytes]))).status).toBe(200);
    expect((await readFile(target)).equals(bytes)).toBe(true);
  });

  it('rejects a relative path, a directory, and a request without a file with 422', async () => {
    const relative = await upload('relative/file.txt', 'x');
    expect(relative.status).toBe(422);
    expect(await relative.json()).toEqual({ detail: [{ loc: ['query', 'path'], msg: 'Path must be absolute', type: 'value_error' }] });

    await mkdir(join(root, 'dir'));
    const directory = await upload(join(root, 'dir'), 'x');
    expect(directory.status).toBe(422);
    expect(await directory.json()).toEqual({ detail: [{ loc: ['query', 'path'], msg: 'Path is a directory', type: 'value_error' }] });

    const wrongField = await upload(join(root, 'x.txt'), 'x', 'other');
    expect(wrongField.status).toBe(422);
    expect((await readAnswer(wrongField, ValidationErrorSchema)).body.detail[0]?.loc).toEqual(['body', 'file']);

    const notMultipart = await app.request(`/api/file/upload?path=${encodeURIComponent(join(root, 'x.txt'))}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(notMultipart.status).toBe(422);
    expect(await notMultipart.json()).toEqual({ detail: [{ loc: ['body', 'file'], msg: 'Field required', type: 'missing' }] });
  });

  it('answers 422 when a parent of the path is a file', async () => {
    await writeFile(join(root, 'plain'), 'x');
    const response = await upload(join(root, 'plain', 'child.txt'), 'x');
    expect(response.status).toBe(422);
    expect((await readAnswer(response, ValidationErrorSchema)).body.detail[0]?.msg).toBe('A parent of the path is not a directory');
  });
});

describe('GET /api/file/download', () => {
  it('streams the file as octet-stream with its length and name', async () => {
    const target = join(root, 'down load.txt');
    await writeFile(target, 'contents');
    const response = await download(target);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('content-length')).toBe('8');
    expect(response.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''down%20load.txt");
    expect(await response.text()).toBe('contents');
  });

  it('streams a pseudo-file that says size 0 without a length its bytes would overrun', async () => {
    const response = await download('/proc/self/cmdline');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBeNull();
    expect((await response.text()).length).toBeGreaterThan(0);
  });

  it('answers 404 "File not found" for a missing file', async () => {
    const response = await download(join(root, 'missing.txt'));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: 'File not found' });
  });

  it('answers 422 for a relative path, a directory, or no path', async () => {
    expect((await download('relative.txt')).status).toBe(422);
    const directory = await download(root);
    expect(directory.status).toBe(422);
    expect(await directory.json()).toEqual({ detail: [{ loc: ['query', 'path'], msg: 'Path is a directory', type: 'value_error' }] });
    const missing = await app.request('/api/file/download');
    expect(await missing.json()).toEqual({ detail: [{ loc: ['query', 'path'], msg: 'Field required', type: 'missing' }] });
  });

  it('reads back what was uploaded', async () => {
    const target = join(root, 'round', 'trip.txt');
    await upload(target, 'round trip ✓');
    expect(await (await download(target)).text()).toBe('round trip ✓');
  });
});
