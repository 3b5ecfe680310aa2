import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { locateSwaggerUi } from '../../src/http/docs/swagger-ui-assets.js';

describe('locateSwaggerUi', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('finds the installed package from a module inside the project', () => {
    const moduleUrl = pathToFileURL(join(process.cwd(), 'src', 'http', 'docs', 'register-api-docs.ts')).href;
    expect(locateSwaggerUi(moduleUrl)).toBe(join(process.cwd(), 'node_modules', 'swagger-ui-dist'));
  });

  it('prefers a swagger-ui/ copy beside a bundle shipped without node_modules', async () => {
    dir = await mkdtemp(join(tmpdir(), 'swagger-ui-assets-'));
    await mkdir(join(dir, 'swagger-ui'));
    await writeFile(join(dir, 'swagger-ui', 'swagger-ui-bundle.js'), '');
    expect(locateSwaggerUi(pathToFileURL(join(dir, 'agent-server.js')).href)).toBe(join(dir, 'swagger-ui'));
  });

  it('finds nothing for a bundle with neither', async () => {
    dir = await mkdtemp(join(tmpdir(), 'swagger-ui-assets-'));
    expect(locateSwaggerUi(pathToFileURL(join(dir, 'agent-server.js')).href)).toBeUndefined();
  });
});
