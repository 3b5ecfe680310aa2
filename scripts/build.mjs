// Bundles each program into one self-contained ESM file under dist/, so the sandbox image only
// needs `node` and the bundle (no npm install inside a docker build).
import { build } from 'esbuild';
import { chmod } from 'node:fs/promises';

const programs = {
  'agent-server': 'src/agent-server/main.ts',
};

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
      logLevel: 'warning',
      // Bundled CommonJS dependencies call require(); give them one.
      banner: {
        js: "#!/usr/bin/env node\nimport { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
      },
    });
    await chmod(outfile, 0o755);
  }),
);
