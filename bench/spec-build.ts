/**
 * Specs built from a Dockerfile, `npm run bench -- spec-build`: SPEC_BUILD_ROUNDS (default 3)
 * rounds, each with a context of its own (a file of new content, COPY'd onto SPEC_BUILD_FROM,
 * default the base image, which the second engine has too, and a RUN reading it):
 * - build through the control plane: POST /api/v1/sandbox-specs with the build -> its log followed
 *   to its end (READY); floor: `docker build` of the same context and Dockerfile on the same
 *   engine, through its API;
 * - cache hit: POST of the same input again -> its answer (READY, cached);
 * - reaching a second engine (unix:///var/run/docker-e1.sock, ../shared/env/extra-engines.sh) with
 *   the built image: built there too (what the control plane does when the engine has the FROM
 *   image) beside `docker save` into `docker load` (what it does otherwise).
 * Needs the engine, the base image and `npm run build`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Readable } from 'node:stream';
import Docker from 'dockerode';
import { SandboxSpecInfoSchema } from '../src/sandbox-server/models/sandbox-spec.js';
import { copyImage } from '../src/sandbox-server/image/index.js';
import { SPEC_DOCKERFILE_NAME, specBuildContext } from '../src/sandbox-server/image/build-spec-image.js';
import { tarOf } from '../src/sandbox-server/runtime/tar.js';
import { startDockerControlPlane } from './docker-control-plane.js';
import { buildBenchImage, removeBenchResources } from './docker-fixture.js';
import { formatMs, formatRatio, loadAverage, percentile, printTable, timed } from './measure.js';

const ROUNDS = Number(process.env.SPEC_BUILD_ROUNDS ?? 3);
const FROM = process.env.SPEC_BUILD_FROM ?? process.env.SANDBOX_BASE_IMAGE ?? 'sandbox-base:local';
const SECOND_ENGINE_SOCKET = '/var/run/docker-e1.sock';

const dockerfile = `FROM ${FROM}\nCOPY app/ /opt/app/\nRUN wc -c /opt/app/data.txt\n`;

function contextOf(marker: string): { archive: Buffer; base64: string } {
  const archive = tarOf([
    { path: 'app/', mode: 0o755 },
    { path: 'app/data.txt', mode: 0o644, content: Buffer.from(`${marker}\n`.repeat(1000)) },
  ]);
  return { archive: archive.subarray(0, archive.length - 1024), base64: archive.toString('base64') };
}

export async function run(): Promise<void> {
  const docker = new Docker();
  const second = existsSync(SECOND_ENGINE_SOCKET) ? new Docker({ socketPath: SECOND_ENGINE_SOCKET }) : undefined;
  const bench = await buildBenchImage(docker, 'bench-spec-build');
  const cp = await startDockerControlPlane(docker, bench, 'runc');
  const made: string[] = [];
  const loadBefore = loadAverage();
  const samples = { build: [] as number[], floor: [] as number[], cacheHit: [] as number[], buildThere: [] as number[], copy: [] as number[] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const context = contextOf(randomUUID());
      const floorTag = `sandbox-server-bench/spec-build-floor:${bench.instanceId}-${round}`;
      made.push(floorTag);
      // A context of its own: the same one would let either build take the other's layers from the engine's cache.
      samples.floor.push(await timed(() => dockerBuild(docker, floorTag, contextOf(randomUUID()).archive)));

      const started = performance.now();
      const spec = await cp.api(SandboxSpecInfoSchema, 'POST', '/api/v1/sandbox-specs', { id: `bench-${round}`, build: { dockerfile, context_tar_base64: context.base64 } });
      made.push(spec.image);
      const log = await (await fetch(`${cp.url}/api/v1/sandbox-specs/bench-${round}/build-log?follow=true`)).text();
      samples.build.push(performance.now() - started);
      if (!/ready in/.test(log)) throw new Error(`the build did not end READY:\n${log}`);

      samples.cacheHit.push(
        await timed(async () => {
          const again = await cp.api(SandboxSpecInfoSchema, 'POST', '/api/v1/sandbox-specs', { id: `bench-${round}-again`, build: { dockerfile, context_tar_base64: context.base64 } });
          if (again.build?.status !== 'READY' || !again.build.cached) throw new Error(`not a cache hit: ${JSON.stringify(again.build)}`);
        }),
      );

      if (second) {
        samples.buildThere.push(await timed(() => dockerBuild(second, spec.image, context.archive)));
        await second.getImage(spec.image).remove({ force: true });
        samples.copy.push(await timed(() => copyImage(docker, second, spec.image, () => undefined)));
        await second.getImage(spec.image).remove({ force: true });
      }
    }
  } finally {
    await cp.close();
    for (const tag of made) await docker.getImage(tag).remove({ force: true }).catch(() => undefined);
    await removeBenchResources(docker, bench);
  }
  const p50 = (values: number[]) => percentile(values, 0.5);
  console.log(`\nspec builds FROM ${FROM}, ${ROUNDS} rounds (p50); load average before ${loadBefore}, after ${loadAverage()}`);
  const rows = [
    ['build through the control plane (POST -> log READY)', formatMs(p50(samples.build)), formatRatio(p50(samples.build) / p50(samples.floor))],
    ['floor: docker build on the engine', formatMs(p50(samples.floor)), '1.00x'],
    ['cache hit (POST of the same input -> READY)', formatMs(p50(samples.cacheHit)), formatRatio(p50(samples.cacheHit) / p50(samples.floor))],
  ];
  if (second) {
    rows.push(['second engine: built there too', formatMs(p50(samples.buildThere)), formatRatio(p50(samples.buildThere) / p50(samples.floor))]);
    rows.push(['second engine: docker save into docker load', formatMs(p50(samples.copy)), formatRatio(p50(samples.copy) / p50(samples.floor))]);
  }
  printTable(['', 'p50', 'vs floor'], rows);
}

/** `docker build` of the spec's context as the control plane sends it, on one engine. */
async function dockerBuild(docker: Docker, tag: string, archive: Buffer): Promise<void> {
  const stream = await docker.buildImage(Readable.from([specBuildContext({ dockerfile, context: { archive, dockerignore: null } })]), {
    t: tag,
    dockerfile: SPEC_DOCKERFILE_NAME,
    networkmode: 'none',
    rm: true,
    forcerm: true,
  });
  const events = await new Promise<{ error?: string }[]>((resolve, reject) => docker.modem.followProgress(stream, (error, output: { error?: string }[]) => (error ? reject(error) : resolve(output))));
  const failure = events.find((event) => event.error);
  if (failure) throw new Error(`docker build ${tag}: ${failure.error}`);
}
