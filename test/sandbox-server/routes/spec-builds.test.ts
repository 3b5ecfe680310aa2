import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type Docker from 'dockerode';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../../src/logger.js';
import { SPEC_IMAGE_REPOSITORY } from '../../../src/contracts/spec-build.js';
import { engines } from '../../../src/sandbox-server/db/schema.js';
import { bringBuiltImages, buildEnginesFor, SpecImageBuilds } from '../../../src/sandbox-server/engines/spec-image-builds.js';
import { SandboxSpecInfoSchema, type SandboxSpecInfo } from '../../../src/sandbox-server/models/sandbox-spec.js';
import type { SpecImages } from '../../../src/sandbox-server/services/context.js';
import { tarOf } from '../../../src/sandbox-server/runtime/tar.js';
import { ErrorDetailSchema, ValidationErrorSchema } from '../../helpers/answer.js';
import { connectDocker, TEST_BASE_IMAGE } from '../../helpers/docker.js';
import { ADMIN_KEY, openTestApp, type TestApp } from '../harness.js';

const docker = await connectDocker();
const SECOND_ENGINE = 'unix:///var/run/docker-e1.sock';
/** A tag of sandbox-busybox:local made on this machine's engine only, for a base the second engine lacks. */
const ONLY_LOCAL = { repo: 'sandbox-server-test/only-local', tag: randomUUID().slice(0, 8) };

/** A context with one file whose content is new each run, so that the first build is never a cache hit. */
function context(marker: string): string {
  return tarOf([
    { path: 'app/', mode: 0o755 },
    { path: 'app/marker.txt', mode: 0o644, content: Buffer.from(`${marker}\n`) },
  ]).toString('base64');
}

const DOCKERFILE = `FROM ${TEST_BASE_IMAGE}\nCOPY app/marker.txt /opt/marker.txt\nRUN cat /opt/marker.txt && echo built-by-test\n`;

/**
 * Specs built from a Dockerfile, through the routes, built by the real builder on this machine's
 * engine and copied to a second one: the answer, the log (followed and kept), the cache by input
 * hash, failures, what starts refuse, and every bad input as a 422.
 */
describe.runIf(docker)('spec builds (routes, real engines)', () => {
  let t: TestApp;
  let builds: SpecImageBuilds;
  const tags = new Set<string>();
  const engineDockers: Docker[] = [];

  beforeAll(async () => {
    // The builder writes to the app's database, made with the app: it is reached through this stand-in.
    const specImages: SpecImages = {
      maxContextBytes: 64 * 1024,
      presence: (tag, labels) => builds.presence(tag, labels),
      start: (job) => builds.start(job),
    };
    t = await openTestApp('pglite', { specImages, maxSpecCreateBodyBytes: 200 * 1024, maxRequestBodyBytes: 16 * 1024 });
    builds = new SpecImageBuilds({
      db: t.handle.db,
      log: logger,
      enginesFor: async (labels) => {
        const found = await buildEnginesFor(t.handle.db, undefined, labels);
        engineDockers.push(...found.map((engine) => engine.docker));
        return found;
      },
      maxContextBytes: specImages.maxContextBytes,
      timeoutMs: 120_000,
      imageLabels: { 'sandbox-server.spec-build': 'test' },
    });
  });
  afterAll(async () => {
    await builds.stop();
    await t.close();
    for (const tag of tags) {
      if (!tag.startsWith(`${SPEC_IMAGE_REPOSITORY}:`)) continue;
      for (const engine of engineDockers) await engine.getImage(tag).remove({ force: true }).catch(() => undefined);
    }
  });
  beforeEach(async () => {
    await t.reset();
    await t.handle.db.update(engines).set({ dockerUrl: 'unix:///var/run/docker.sock' }).where(eq(engines.name, 'local'));
  });

  const create = async (body: Record<string, unknown>) => {
    const answer = await t.call('POST', '/api/v1/sandbox-specs', body, SandboxSpecInfoSchema);
    expect(answer.status).toBe(201);
    // Only what this test built is removed after: never an image a spec merely names.
    if (answer.body.build) tags.add(answer.body.image);
    return answer.body;
  };
  const log = async (id: string, follow = false) => {
    const response = await t.app.request(`/api/v1/sandbox-specs/${encodeURIComponent(id)}/build-log${follow ? '?follow=true' : ''}`, {
      headers: { authorization: 'Bearer test-api-key-0123456789' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    return response.text();
  };
  const spec = async (id: string): Promise<SandboxSpecInfo> => {
    const { body } = await t.call('GET', `/api/v1/sandbox-specs?id=${encodeURIComponent(id)}`);
    return SandboxSpecInfoSchema.parse((body as unknown[])[0]);
  };

  it('builds, streams the log to its end, and answers the same input from the cache', async () => {
    const marker = randomUUID();
    const first = await create({ id: 'built', build: { dockerfile: DOCKERFILE, context_tar_base64: context(marker) } });
    expect(first.image).toMatch(/^sandbox-server\/spec-build:[0-9a-f]{64}$/);
    expect(first.build).toEqual({ status: 'BUILDING', detail: null, cached: false, started_at: expect.any(String), finished_at: null });
    // Starting one meanwhile is refused, saying why.
    const early = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'built' }, ErrorDetailSchema);
    if ((await spec('built')).build?.status === 'BUILDING') {
      expect(early.status).toBe(409);
      expect(early.body.detail).toMatch(/still building its image/);
    }

    const followed = await log('built', true);
    expect(followed).toContain(`building ${first.image}`);
    expect(followed).toContain(marker);
    expect(followed).toContain('built-by-test');
    expect(followed).toMatch(/ready in [\d.]+ s/);
    const ready = await spec('built');
    expect(ready.build).toMatchObject({ status: 'READY', cached: false, finished_at: expect.any(String) });
    expect(await log('built')).toBe(followed);
    const started = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'built' });
    expect(started.status).toBe(200);

    // The same Dockerfile and context, packed again (other times in the tar): nothing is built.
    const second = await create({ id: 'built-again', build: { dockerfile: DOCKERFILE, context_tar_base64: context(marker) } });
    expect(second.image).toBe(first.image);
    expect(second.build).toMatchObject({ status: 'READY', cached: true, finished_at: expect.any(String) });
    expect(await log('built-again', true)).toMatch(/^cache hit: .* nothing to build\n$/);
    // A gzipped context of the same entries is the same input.
    const zipped = await create({ id: 'built-zipped', build: { dockerfile: DOCKERFILE, context_tar_base64: gzipSync(Buffer.from(context(marker), 'base64')).toString('base64') } });
    expect(zipped.image).toBe(first.image);
  }, 120_000);

  it('brings the image to every engine the spec may be placed on: built there too, or copied when that engine lacks the base', async () => {
    const e1 = await t.callAs(ADMIN_KEY, 'POST', '/api/v1/engines', { name: 'e1', docker_url: SECOND_ENGINE, advertise_host: '127.0.0.2', labels: { pool: 'shared' } });
    expect(e1.status).toBe(201);
    await t.handle.db.update(engines).set({ labels: { pool: 'shared' } }).where(eq(engines.name, 'local'));
    const built = await create({ id: 'fleet', engine_labels: { pool: 'shared' }, build: { dockerfile: DOCKERFILE, context_tar_base64: context(randomUUID()) } });
    const followed = await log('fleet', true);
    expect(followed).toMatch(/engine e1: built there too in [\d.]+ s/);
    expect((await spec('fleet')).build?.status).toBe('READY');
    const [local, second] = await buildEnginesFor(t.handle.db, undefined, { pool: 'shared' });
    for (const engine of [local!, second!]) expect((await engine.docker.getImage(built.image).inspect()).Config.Labels).toMatchObject({ 'sandbox-server.spec-build': 'test' });

    // An engine without the FROM image gets the image copied instead.
    await local!.docker.getImage('sandbox-busybox:local').tag(ONLY_LOCAL);
    try {
      const copied = await create({ id: 'fleet-copied', engine_labels: { pool: 'shared' }, build: { dockerfile: `FROM ${ONLY_LOCAL.repo}:${ONLY_LOCAL.tag}\nCOPY app/marker.txt /marker.txt\n`, context_tar_base64: context(randomUUID()) } });
      const copyLog = await log('fleet-copied', true);
      expect(copyLog).toMatch(/engine e1: building there failed \(FROM .*\); copying the image from local/);
      expect(copyLog).toMatch(/engine e1: copied from local in [\d.]+ s/);
      expect((await spec('fleet-copied')).build?.status).toBe('READY');
      const ids = await Promise.all([local!.docker.getImage(copied.image).inspect(), second!.docker.getImage(copied.image).inspect()]);
      expect(ids[1].Id).toBe(ids[0].Id);
    } finally {
      // The tag only: the image keeps its own.
      await local!.docker.getImage(`${ONLY_LOCAL.repo}:${ONLY_LOCAL.tag}`).remove().catch(() => undefined);
    }
    // Only the engines it may be placed on: a spec whose labels match none is refused.
    const nowhere = await t.call('POST', '/api/v1/sandbox-specs', { id: 'nowhere', engine_labels: { pool: 'none' }, build: { dockerfile: DOCKERFILE } }, ValidationErrorSchema);
    expect(nowhere.status).toBe(422);
    expect(nowhere.body.detail[0]?.loc).toEqual(['body', 'engine_labels']);
  }, 120_000);

  it('copies the built images to an engine added after their specs were built, before it runs sandboxes', async () => {
    await t.handle.db.update(engines).set({ labels: { pool: 'late' } }).where(eq(engines.name, 'local'));
    const built = await create({ id: 'early', engine_labels: { pool: 'late' }, build: { dockerfile: DOCKERFILE, context_tar_base64: context(randomUUID()) } });
    await log('early', true);
    expect((await spec('early')).build?.status).toBe('READY');
    expect((await t.callAs(ADMIN_KEY, 'POST', '/api/v1/engines', { name: 'e1', docker_url: SECOND_ENGINE, advertise_host: '127.0.0.2', labels: { pool: 'late' } })).status).toBe(201);
    const [row] = await t.handle.db.select().from(engines).where(eq(engines.name, 'e1'));
    expect(await bringBuiltImages(t.handle.db, undefined, row!, logger)).toEqual([built.image]);
    const [local, second] = await buildEnginesFor(t.handle.db, undefined, { pool: 'late' });
    expect((await second!.docker.getImage(built.image).inspect()).Id).toBe((await local!.docker.getImage(built.image).inspect()).Id);
    // Present now: nothing to do again.
    expect(await bringBuiltImages(t.handle.db, undefined, row!, logger)).toEqual([]);
  }, 120_000);

  it('leaves a failed build FAILED with its log and reason, and refuses its sandboxes', async () => {
    const failing = await create({ id: 'broken', build: { dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN echo about-to-fail-${randomUUID()} && exit 3\n` } });
    const followed = await log('broken', true);
    expect(followed).toMatch(/about-to-fail-/);
    expect(followed).toMatch(/failed: RUN echo about-to-fail-.*: The command .* returned a non-zero code: 3/);
    const failed = await spec('broken');
    expect(failed.build).toMatchObject({ status: 'FAILED', detail: expect.stringMatching(/returned a non-zero code: 3/) });
    expect(failing.build?.status).toBe('BUILDING');
    const refused = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'broken' }, ValidationErrorSchema);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'sandbox_spec_id'], msg: expect.stringMatching(/its build failed \(.*non-zero code: 3\)/) })]);

    // A base image no engine has fails the same way (builds pull nothing).
    await create({ id: 'no-base', build: { dockerfile: 'FROM sandbox-server-test/no-such-image:never\n' } });
    await log('no-base', true);
    expect((await spec('no-base')).build).toMatchObject({
      status: 'FAILED',
      detail: expect.stringMatching(/^FROM sandbox-server-test\/no-such-image:never: the engine has no image sandbox-server-test\/no-such-image:never and could not pull it/),
    });
  }, 120_000);

  it('refuses bad input with a 422 naming the field', async () => {
    const cases: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ id: 'x', image: TEST_BASE_IMAGE, build: { dockerfile: DOCKERFILE } }, ['body', 'build'], /either image or build/],
      [{ id: 'x' }, ['body', 'image'], /either image or build/],
      [{ id: 'x', build: { dockerfile: 'RUN true\n' } }, ['body', 'build', 'dockerfile'], /no FROM/],
      [{ id: 'x', build: { dockerfile: '' } }, ['body', 'build', 'dockerfile'], /at least 1|>=1/],
      [{ id: 'x', build: { dockerfile: DOCKERFILE, context_tar_base64: 'not base64!' } }, ['body', 'build', 'context_tar_base64'], /base64/],
      [{ id: 'x', build: { dockerfile: DOCKERFILE, context_tar_base64: Buffer.from('hello, not a tar').toString('base64') } }, ['body', 'build', 'context_tar_base64'], /not a tar archive/],
      [
        { id: 'x', build: { dockerfile: DOCKERFILE, context_tar_base64: tarOf([{ path: '../escape', mode: 0o644, content: Buffer.from('x') }]).toString('base64') } },
        ['body', 'build', 'context_tar_base64'],
        /outside itself/,
      ],
      [
        { id: 'x', build: { dockerfile: DOCKERFILE, context_tar_base64: tarOf([{ path: 'big', mode: 0o644, content: Buffer.alloc(70 * 1024) }]).toString('base64') } },
        ['body', 'build', 'context_tar_base64'],
        /unpacks to more than/,
      ],
      [
        { id: 'x', build: { dockerfile: DOCKERFILE, context_tar_base64: gzipSync(tarOf([{ path: 'big', mode: 0o644, content: Buffer.alloc(10 * 1024 * 1024) }])).toString('base64') } },
        ['body', 'build', 'context_tar_base64'],
        /unpacks to more than/,
      ],
      [{ id: 'x', build: { dockerfile: DOCKERFILE, extra: 1 } }, ['body', 'build', 'extra'], /Extra inputs are not permitted/],
    ];
    for (const [body, loc, msg] of cases) {
      const answer = await t.call('POST', '/api/v1/sandbox-specs', body, ValidationErrorSchema);
      expect(answer.status, JSON.stringify(loc)).toBe(422);
      expect(answer.body.detail[0]).toEqual(expect.objectContaining({ loc, msg: expect.stringMatching(msg) }));
    }
    expect((await t.call('GET', '/api/v1/sandbox-specs?id=x')).body).toEqual([null]);
  });

  it('takes a context larger than other requests may be, up to its own limit', async () => {
    // 16 KB is the request limit here; this context is 40 KB.
    const big = tarOf([{ path: 'blob', mode: 0o644, content: Buffer.from(randomUUID().repeat(1100)) }]).toString('base64');
    expect(big.length).toBeGreaterThan(16 * 1024);
    const built = await create({ id: 'big', build: { dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY blob /blob\n`, context_tar_base64: big } });
    await log('big', true);
    expect((await spec('big')).build?.status).toBe('READY');
    expect(built.build?.cached).toBe(false);
    const other = await t.call('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'big', padding: big });
    expect(other.status).toBe(413);
  }, 120_000);

  it('has no build log for a spec naming an image, nor for an unknown one', async () => {
    await create({ id: 'plain', image: TEST_BASE_IMAGE });
    for (const id of ['plain', 'unknown']) {
      const answer = await t.call('GET', `/api/v1/sandbox-specs/${id}/build-log`, undefined, ErrorDetailSchema);
      expect(answer.status).toBe(404);
      expect(answer.body.detail).toMatch(/no build log/);
    }
    expect((await spec('plain')).build).toBeNull();
  });

  it('shows a build as ended when its control plane stopped mid-build', async () => {
    await create({ id: 'slow', build: { dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN echo ${randomUUID()} && sleep 60\n` } });
    await vi.waitFor(async () => expect(await log('slow')).toMatch(/Running in/), { timeout: 30_000, interval: 100 });
    await builds.stop();
    expect((await spec('slow')).build).toMatchObject({ status: 'FAILED', detail: expect.stringMatching(/control plane stopped during the build/) });
  }, 60_000);
});
