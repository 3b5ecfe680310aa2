/**
 * The runtime self-test against the real engine: runc and runsc pass it with the base image; a
 * runtime the engine lacks fails it; and so does gVisor with an image whose `ls` answers EINVAL as
 * gVisor 2022-12-19 did to bookworm's coreutils (simulated: the image's `ls` fails under gVisor's
 * kernel version only), while runc passes with that image.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../../../src/sandbox-server/runtime/index.js';
import { LABEL_RUNTIME_PROBE } from '../../../src/sandbox-server/runtime/docker-runtime-probe.js';
import { LABEL_INSTANCE } from '../../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, TEST_BASE_IMAGE, testInstanceId } from '../../helpers/docker.js';

const docker = await connectDocker();
const run = promisify(execFile);
const instanceId = testInstanceId();
const EINVAL_IMAGE = `sandbox-server-test/einval-ls:${instanceId}`;

/** gVisor reports kernel 4.4.0; there this image's `ls` fails the way the old gVisor made it fail. */
const EINVAL_DOCKERFILE = `FROM ${TEST_BASE_IMAGE}
RUN mv /usr/bin/ls /usr/bin/ls.real && printf '%s\\n' '#!/bin/sh' \\
  'if [ "$(uname -r)" = 4.4.0 ]; then echo "ls: cannot access '"'"'/'"'"': Invalid argument" >&2; exit 2; fi' \\
  'exec /usr/bin/ls.real "$@"' > /usr/bin/ls && chmod 755 /usr/bin/ls
`;

describe.skipIf(!docker)('the runtime self-test on Docker', { timeout: 60_000 }, () => {
  const runtime = createDockerRuntime({ instanceId, readRoutes: async () => '' });

  beforeAll(async () => {
    const build = run('docker', ['build', '-q', '-t', EINVAL_IMAGE, '-'], { maxBuffer: 16 * 1024 * 1024 });
    build.child.stdin?.end(EINVAL_DOCKERFILE);
    await build;
  }, 120_000);
  afterAll(async () => {
    await docker?.getImage(EINVAL_IMAGE).remove({ force: true }).catch(() => undefined);
    await runtime.close();
  });

  it('passes runc and runsc with the base image, and leaves no container behind', async () => {
    const [runc, runsc] = await Promise.all([runtime.probeRuntime('runc', TEST_BASE_IMAGE), runtime.probeRuntime('runsc', TEST_BASE_IMAGE)]);
    expect(runc).toMatchObject({ runtime: 'runc', status: 'ok', detail: null, image: TEST_BASE_IMAGE });
    expect(runsc).toMatchObject({ runtime: 'runsc', status: 'ok', detail: null });
    expect(runc.durationMs).toBeGreaterThan(0);
    const left = await docker!.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_RUNTIME_PROBE] } });
    expect(left).toEqual([]);
  });

  it('fails gVisor with the step that failed and its message when `ls` answers EINVAL, and passes runc', async () => {
    const [runsc, runc] = await Promise.all([runtime.probeRuntime('runsc', EINVAL_IMAGE), runtime.probeRuntime('runc', EINVAL_IMAGE)]);
    expect(runsc).toMatchObject({ status: 'failed', detail: "ls: cannot access '/': Invalid argument (exit code 2)" });
    expect(runc).toMatchObject({ status: 'ok' });
  });

  it('fails a runtime the engine lacks, saying so', async () => {
    const probe = await runtime.probeRuntime('runsc-not-registered', TEST_BASE_IMAGE);
    expect(probe.status).toBe('failed');
    expect(probe.detail).toMatch(/unknown runtime/i);
  });
});
