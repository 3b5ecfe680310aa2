import type Docker from 'dockerode';
import { dockerMessageOf } from './docker-errors.js';
import { LABEL_INSTANCE, type RuntimeProbe } from './runtime.js';
import { demultiplexLogs } from './docker-logs.js';

/** Carried by a runtime's self-test container: the runtime it tests. */
export const LABEL_RUNTIME_PROBE = 'sandbox-server.runtime-probe';

const PROBE_TIMEOUT_MS = 30_000;
const PASSED = 'runtime-probe-passed';

/**
 * What every sandbox does first and an unfit runtime cannot: list and stat files (gVisor 2022-12-19
 * answers bookworm coreutils' statx with EINVAL), write a file and read it back, start a process.
 * `set -e` stops at the first failing step, whose own message ends the output.
 */
const PROBE_SCRIPT = [
  'set -e',
  'ls -la / >/dev/null',
  'stat / >/dev/null',
  'echo probe >/tmp/.runtime-probe',
  'test "$(cat /tmp/.runtime-probe)" = probe',
  'rm /tmp/.runtime-probe',
  'sh -c "exit 0"',
  `echo ${PASSED}`,
].join('\n');

/** Runs the self-test of OCI runtime `runtime` on the engine (see SandboxRuntime.probeRuntime). */
export async function probeRuntimeOn(docker: Docker, instanceId: string, runtime: string, image: string): Promise<RuntimeProbe> {
  const started = Date.now();
  const outcome = (status: RuntimeProbe['status'], detail: string | null): RuntimeProbe => ({
    runtime,
    status,
    detail,
    image,
    durationMs: Date.now() - started,
    probedAt: new Date(started),
  });
  let container: Docker.Container | undefined;
  try {
    container = await docker.createContainer({
      Image: image,
      Entrypoint: ['sh', '-c', PROBE_SCRIPT],
      Cmd: [],
      User: '0',
      Labels: { [LABEL_INSTANCE]: instanceId, [LABEL_RUNTIME_PROBE]: runtime },
      HostConfig: { Runtime: runtime, NetworkMode: 'none', Privileged: false, SecurityOpt: ['no-new-privileges:true'] },
    });
    await container.start();
    const exit = await waitFor(container);
    if (exit === null) return outcome('failed', `its test container did not finish within ${PROBE_TIMEOUT_MS / 1000} s`);
    const output = demultiplexLogs(Buffer.from(await container.logs({ stdout: true, stderr: true, follow: false }))).trim();
    // Passed when every step did: stray messages of a step that still succeeded (gVisor's ls now and
    // then says "Bad file descriptor" of a symlink under load, and exits 0) do not fail it.
    if (exit === 0 && output.split('\n').includes(PASSED)) return outcome('ok', null);
    const lastLine = output.split('\n').filter((line) => line !== PASSED).at(-1)?.trim() || 'no output';
    return outcome('failed', `${lastLine} (exit code ${exit})`);
  } catch (error) {
    return outcome('failed', dockerMessageOf(error));
  } finally {
    await container?.remove({ force: true }).catch(() => undefined);
  }
}

/** The container's exit code, or null when it runs past the probe's time. */
async function waitFor(container: Docker.Container): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), PROBE_TIMEOUT_MS)));
  try {
    const waited = container.wait().then((result: { StatusCode: number }) => result.StatusCode);
    return await Promise.race([waited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
