import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { SPEC_IMAGE_REPOSITORY } from '../../src/contracts/spec-build.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { ValidationErrorSchema } from '../helpers/answer.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { ensureBuilt, runSandboxctl } from '../cli/binary.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
/** Bookworm with python3 and no node (../shared/env/more-images.sh). */
const PYTHON_IMAGE = 'sandbox-python:local';

/**
 * Specs built from a Dockerfile, end to end: sandboxctl packs a directory (its .dockerignore
 * applied) and prints the build's log as it comes; the control plane builds FROM an image with no
 * node, and a sandbox of the spec runs the agent-server brought in, with the copied files there,
 * under runc and runsc. The same input again is a cache hit; a failing Dockerfile leaves its spec
 * FAILED with its log, and sandboxctl exits 1 saying why.
 */
describe.runIf(docker)('specs built from a Dockerfile, end to end', () => {
  const engine = docker as Docker;
  let cp: E2eControlPlane;
  let dir: string;
  let runtimes: string[] = [];
  const marker = randomUUID();
  const built = new Set<string>();

  const ctl = (...args: string[]) => runSandboxctl(args, { env: { SANDBOX_SERVER_URL: cp.url, SANDBOX_SERVER_API_KEY: cp.apiKey } });
  const bash = async (sandboxId: string, command: string) =>
    (await cp.request('POST', `/api/v1/sandboxes/${sandboxId}/agent/api/bash/execute_bash_command`, { command, timeout: 30 }, BashOutputSchema)).body;
  const spec = async (id: string) => (await cp.request('GET', `/api/v1/sandbox-specs?id=${encodeURIComponent(id)}`, undefined, z.array(SandboxSpecInfoSchema.nullable()))).body[0];

  beforeAll(async () => {
    if (!(await engine.getImage(PYTHON_IMAGE).inspect().catch(() => undefined))) throw new Error(`${PYTHON_IMAGE} is missing: run ../shared/env/more-images.sh`);
    await Promise.all([buildE2eImage(), ensureBuilt()]);
    cp = await startE2eControlPlane();
    runtimes = Object.keys((await engine.info()).Runtimes ?? {});
    dir = await makeTempDir('spec-build-e2e-');
    await mkdir(join(dir, 'project', 'logs'), { recursive: true });
    await writeFile(join(dir, 'project', 'greeting.txt'), `hello ${marker}\n`);
    await writeFile(join(dir, 'project', 'count.py'), 'print(sum(range(10)))\n');
    await writeFile(join(dir, 'project', 'secret.txt'), 'never sent\n');
    await writeFile(join(dir, 'project', 'logs', 'big.log'), 'never sent either\n');
    await writeFile(join(dir, 'project', '.dockerignore'), 'secret.txt\n**/*.log\n');
    await writeFile(
      join(dir, 'Dockerfile'),
      `FROM ${PYTHON_IMAGE}\nCOPY . /opt/project/\nRUN python3 /opt/project/count.py > /opt/project/built.txt\n`,
    );
    await writeFile(join(dir, 'Failing.Dockerfile'), `FROM ${PYTHON_IMAGE}\nRUN echo "failing on purpose ${marker}" && exit 7\n`);
  }, 300_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
    for (const image of built) if (image.startsWith(`${SPEC_IMAGE_REPOSITORY}:`)) await engine.getImage(image).remove({ force: true }).catch(() => undefined);
    if (dir) await removeDir(dir);
  });

  it('builds with sandboxctl, printing the log, runs the agent in it under runc and runsc, and builds the same input once', async () => {
    const startedAt = Date.now();
    const created = await ctl('--json', 'specs', 'create', '--id', 'df-runc', '--runtime', 'runc', '--dockerfile', join(dir, 'Dockerfile'), '--context', join(dir, 'project'));
    const buildMs = Date.now() - startedAt;
    expect(created.code, created.stderr).toBe(0);
    // With --json the log goes to stderr and the spec to stdout.
    expect(created.stderr).toMatch(/^building sandbox-server\/spec-build:[0-9a-f]{64}$/m);
    expect(created.stderr, created.stderr).toMatch(/Step 1\/\d+ : FROM sandbox-python:local/);
    expect(created.stderr).toMatch(/ready in [\d.]+ s/);
    const first = SandboxSpecInfoSchema.parse(JSON.parse(created.stdout));
    built.add(first.image);
    expect(first.build).toMatchObject({ status: 'READY', cached: false });

    // The same Dockerfile and context: nothing is built, and the answer says so at once.
    const cachedAt = Date.now();
    const again = await ctl('specs', 'create', '--id', 'df-runsc', '--runtime', 'runsc', '--dockerfile', join(dir, 'Dockerfile'), '--context', join(dir, 'project'));
    const cacheHitMs = Date.now() - cachedAt;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^cache hit: .* nothing to build$/m);
    expect(again.stdout).toMatch(/^build +READY \(cached\)$/m);
    expect(again.stdout).toMatch(new RegExp(`^image +${first.image}$`, 'm'));
    expect((await spec('df-runsc'))?.image).toBe(first.image);
    console.log(`spec build: ${buildMs} ms through sandboxctl; the same input again (cache hit): ${cacheHitMs} ms`);

    for (const [specId, runtime] of [['df-runc', 'runc'], ['df-runsc', 'runsc']] as const) {
      if (!runtimes.includes(runtime)) throw new Error(`the engine lacks ${runtime}`);
      const started = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema);
      expect(started.status).toBe(200);
      const sandbox = await cp.sandboxUntil(started.body.id, 'RUNNING');
      expect(await bash(sandbox.id, 'cat /opt/project/greeting.txt /opt/project/built.txt; ls -A /opt/project | sort | tr "\\n" " "; command -v node || echo no-node')).toMatchObject({
        exit_code: 0,
        stdout: `hello ${marker}\n45\nbuilt.txt count.py greeting.txt logs no-node\n`,
      });
      expect(await bash(sandbox.id, 'ls -A /opt/project/logs | wc -l; id -un')).toMatchObject({ stdout: '0\nopenhands\n' });
      expect((await cp.request('DELETE', `/api/v1/sandboxes/${sandbox.id}`)).status).toBe(200);
    }
  }, 300_000);

  it('leaves a failing Dockerfile FAILED with its log; sandboxctl exits 1 saying why, and its sandboxes are refused', async () => {
    const failed = await ctl('specs', 'create', '--id', 'df-failing', '--dockerfile', join(dir, 'Failing.Dockerfile'));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`failing on purpose ${marker}`);
    expect(failed.stderr).toMatch(/^sandboxctl: the image of sandbox spec df-failing did not build: RUN echo .*: The command .* returned a non-zero code: 7 \(its log: sandboxctl specs build-log df-failing\)$/m);
    const stored = await spec('df-failing');
    built.add(stored?.image ?? '');
    expect(stored?.build).toMatchObject({ status: 'FAILED', detail: expect.stringMatching(/non-zero code: 7/) });
    const log = await ctl('specs', 'build-log', 'df-failing');
    expect(log.code).toBe(0);
    expect(log.stdout).toContain(`failing on purpose ${marker}`);
    expect(log.stdout).toMatch(/failed: RUN echo/);
    const refused = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'df-failing' }, ValidationErrorSchema);
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0]?.msg).toMatch(/its build failed/);
  }, 120_000);
});
