/**
 * `npm run bench [-- name ...]`: runs the named benchmarks (all of them by default), one after the
 * other in this process. Benchmarks print; they never fail on a timing.
 */
const BENCHES: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  events: () => import('./events.js'),
  // Needs DATABASE_URL.
  followers: () => import('./followers.js'),
  // Needs `npm run build`.
  restart: () => import('./restart.js'),
  api: () => import('./api.js'),
  // Needs `npm run build`.
  proxy: () => import('./proxy.js'),
  // Needs `npm run build`.
  preview: () => import('./preview.js'),
  // Needs the Docker engine, the base image and `npm run build`.
  lifecycle: () => import('./lifecycle.js'),
  // Needs the Docker engine, the base image and `npm run build`.
  snapshots: () => import('./snapshots.js'),
  // Needs the Docker engine, the base image and `npm run build`.
  warm: () => import('./warm.js'),
  // Needs the Docker engine, the base image and `npm run build`.
  cold: () => import('./cold.js'),
  // Needs the Docker engine, sandbox-python:local, the base image and `npm run build`.
  images: () => import('./images.js'),
  // Needs tmux and script; its browser part needs Chromium.
  tools: () => import('./tools.js'),
  llm: () => import('./llm.js'),
  // Needs git.
  clone: () => import('./clone.js'),
  // Needs curl.
  egress: () => import('./egress.js'),
  // Needs the Docker engine, the base image and `npm run build`; ../shared/env/extra-engines.sh for its second-engine rows.
  'spec-build': () => import('./spec-build.js'),
  relay: () => import('./relay.js'),
  // Needs DATABASE_URL, the Docker engine (and ../shared/env/extra-engines.sh), the base image and `npm run build`.
  fleet: () => import('./fleet.js'),
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  console.error(`Unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
for (const name of requested.length > 0 ? requested : Object.keys(BENCHES)) {
  console.log(`\n=== ${name} ===`);
  const started = performance.now();
  await (await BENCHES[name]!()).run();
  console.log(`(${name}: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
