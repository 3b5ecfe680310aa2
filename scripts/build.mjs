// Bundles each program into one self-contained ESM file under dist/, so the sandbox image only
// needs `node` and the bundle (no npm install inside a docker build).
import { build } from 'esbuild';
import { chmod, copyFile, cp, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const programs = {
  'agent-server': 'src/agent-server/main.ts',
  'sandbox-server': 'src/sandbox-server/main.ts',
  sandboxctl: 'src/cli/main.ts',
};
// Programs that run on the host beside node_modules keep their dependencies external: dockerode's
// native addons and PGlite's wasm files cannot be inlined into one file.
const hostPrograms = new Set(['sandbox-server']);
// The browser driver finds its own files by path at run time, so it cannot be inlined; the
// agent-server loads it only when a browser tool is first used, from dist/node_modules/ (below).
const externalOf = { 'agent-server': ['playwright-core'] };

await Promise.all(
  Object.entries(programs).map(async ([name, entry]) => {
    const outfile = `dist/${name}.js`;
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      sourcemap: true,
      packages: hostPrograms.has(name) ? 'external' : undefined,
      external: externalOf[name],
      logLevel: 'warning',
      // Bundled CommonJS dependencies call require(); give them one.
      banner: {
        js: "#!/usr/bin/env node\nimport { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
      },
    });
    await chmod(outfile, 0o755);
  }),
);

// The agent-server image ships dist/ without node_modules: its /docs page serves these files from a
// swagger-ui/ folder beside the bundle.
const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
await mkdir('dist/swagger-ui', { recursive: true });
for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']) {
  await copyFile(join(swaggerUi, file), join('dist/swagger-ui', file));
}

// The agent-server's browser driver, beside the bundle as /app/node_modules/ in the image.
const require = createRequire(import.meta.url);
const playwrightCore = dirname(require.resolve('playwright-core/package.json'));
await rm('dist/node_modules', { recursive: true, force: true });
await cp(playwrightCore, 'dist/node_modules/playwright-core', { recursive: true, filter: (source) => !source.startsWith(join(playwrightCore, 'types')) });
