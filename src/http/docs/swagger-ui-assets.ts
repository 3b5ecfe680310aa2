import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The files of swagger-ui-dist the page loads, with their content types; nothing else is served. */
export const SWAGGER_UI_FILES: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

/**
 * Where swagger-ui-dist's files are: a `swagger-ui/` folder beside the running module (a bundle in
 * dist/ shipped without node_modules, as in the agent-server image, gets its copy there), else the
 * installed package, resolved from the module so it works from src/ and from dist/ alike. Undefined
 * when neither exists.
 */
export function locateSwaggerUi(moduleUrl: string = import.meta.url): string | undefined {
  const beside = join(dirname(fileURLToPath(moduleUrl)), 'swagger-ui');
  if (existsSync(join(beside, 'swagger-ui-bundle.js'))) return beside;
  try {
    return dirname(createRequire(moduleUrl).resolve('swagger-ui-dist/package.json'));
  } catch {
    return undefined;
  }
}

/** Reads each served file once; the bundle is 1.5 MB and never changes while the process runs. */
export function swaggerUiFileReader(dir: string): (name: string) => Promise<Buffer> {
  const files = new Map<string, Promise<Buffer>>();
  return (name) => {
    let file = files.get(name);
    if (file === undefined) {
      file = readFile(join(dir, name));
      files.set(name, file);
    }
    return file;
  };
}
