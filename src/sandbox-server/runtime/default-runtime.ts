import type { OciRuntime, RuntimeSetting } from '../../contracts/sandbox.js';

export interface DefaultRuntimeChoice {
  runtime: OciRuntime;
  /** One line for the operator when the choice is weaker than asked or cannot work. */
  warning: string | null;
  /** Why the server must not start: the runtime it would use failed its self-test. */
  refusal: string | null;
}

/** What to do about a gVisor that is missing or fails its self-test. */
const INSTALL_GVISOR =
  'install gVisor 2024-07-29 or newer (Debian: runsc from bookworm-backports) and register it with dockerd as "runsc" with runtimeArgs ["--overlay2=none"]';

/**
 * The runtime of specs that name none, from SANDBOX_RUNTIME, what `docker info` lists (null when
 * the engine could not be asked) and which of those failed their self-test (runtime -> why). `auto`
 * prefers gVisor and says once why and what to install when it must settle for runc; a runtime that
 * failed its self-test is never chosen, and one asked for explicitly refuses the start.
 */
export function chooseDefaultRuntime(
  setting: RuntimeSetting,
  available: readonly string[] | null,
  failed: ReadonlyMap<string, string> = new Map(),
): DefaultRuntimeChoice {
  const refusalOf = (runtime: OciRuntime, asked: string) => {
    const why = failed.get(runtime);
    return why === undefined ? null : `${asked} but ${runtime} failed its self-test on the Docker engine: ${why}`;
  };
  if (setting === 'auto') {
    if (available?.includes('runsc') && !failed.has('runsc')) return { runtime: 'runsc', warning: null, refusal: null };
    const why =
      available === null
        ? 'the Docker engine could not be asked which runtimes it has'
        : failed.has('runsc')
          ? `runsc failed its self-test (${failed.get('runsc')})`
          : 'the Docker engine has no runsc (gVisor) runtime';
    return {
      runtime: 'runc',
      warning: `sandboxes run under runc, not gVisor: ${why}; to isolate them further, ${INSTALL_GVISOR}`,
      refusal: refusalOf('runc', 'SANDBOX_RUNTIME=auto fell back to runc'),
    };
  }
  const refusal = refusalOf(setting, `SANDBOX_RUNTIME=${setting}`);
  if (refusal) {
    const fix = setting === 'runsc' ? INSTALL_GVISOR : 'repair the Docker engine';
    return { runtime: setting, warning: null, refusal: `${refusal}; ${fix}, or set SANDBOX_RUNTIME=auto` };
  }
  if (available !== null && !available.includes(setting)) {
    return {
      runtime: setting,
      warning: `SANDBOX_RUNTIME=${setting} but the Docker engine has no such runtime (it has: ${available.join(', ')}); sandboxes of the default spec will fail`,
      refusal: null,
    };
  }
  return { runtime: setting, warning: null, refusal: null };
}
