import type { OciRuntime } from '../../contracts/sandbox.js';

export type RuntimeSetting = 'auto' | OciRuntime;

export interface DefaultRuntimeChoice {
  runtime: OciRuntime;
  /** One line for the operator when the choice is weaker than asked or cannot work. */
  warning: string | null;
}

/**
 * The runtime of specs that name none, from SANDBOX_RUNTIME and what `docker info` lists (null when
 * the engine could not be asked). `auto` prefers gVisor and says so once when it must settle for runc.
 */
export function chooseDefaultRuntime(setting: RuntimeSetting, available: readonly string[] | null): DefaultRuntimeChoice {
  if (setting === 'auto') {
    if (available?.includes('runsc')) return { runtime: 'runsc', warning: null };
    const why = available === null ? 'the Docker engine could not be asked which runtimes it has' : 'the Docker engine has no runsc (gVisor) runtime';
    return { runtime: 'runc', warning: `sandboxes run under runc, not gVisor: ${why}; install runsc and register it with dockerd to isolate them further` };
  }
  if (available !== null && !available.includes(setting)) {
    return { runtime: setting, warning: `SANDBOX_RUNTIME=${setting} but the Docker engine has no such runtime (it has: ${available.join(', ')}); sandboxes of the default spec will fail` };
  }
  return { runtime: setting, warning: null };
}
