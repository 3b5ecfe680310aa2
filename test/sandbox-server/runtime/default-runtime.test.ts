import { describe, expect, it } from 'vitest';
import { chooseDefaultRuntime } from '../../../src/sandbox-server/runtime/default-runtime.js';

const EINVAL = "ls: cannot access '/': Invalid argument (exit code 2)";

describe('chooseDefaultRuntime', () => {
  it('auto takes gVisor when the engine lists runsc, and warns once, saying what to install, when it settles for runc', () => {
    expect(chooseDefaultRuntime('auto', ['io.containerd.runc.v2', 'runc', 'runsc'])).toEqual({ runtime: 'runsc', warning: null, refusal: null });
    expect(chooseDefaultRuntime('auto', ['runc'])).toEqual({
      runtime: 'runc',
      warning: expect.stringMatching(/^sandboxes run under runc, not gVisor: the Docker engine has no runsc.*install gVisor 2024-07-29 or newer/),
      refusal: null,
    });
    expect(chooseDefaultRuntime('auto', null)).toEqual({ runtime: 'runc', warning: expect.stringContaining('could not be asked'), refusal: null });
  });

  it('auto falls back to runc when runsc failed its self-test, saying why; and refuses when runc failed too', () => {
    expect(chooseDefaultRuntime('auto', ['runc', 'runsc'], new Map([['runsc', EINVAL]]))).toEqual({
      runtime: 'runc',
      warning: expect.stringContaining(`runsc failed its self-test (${EINVAL}); to isolate them further, install gVisor`),
      refusal: null,
    });
    const both = chooseDefaultRuntime('auto', ['runc', 'runsc'], new Map([['runsc', EINVAL], ['runc', 'exec format error']]));
    expect(both.refusal).toBe('SANDBOX_RUNTIME=auto fell back to runc but runc failed its self-test on the Docker engine: exec format error');
  });

  it('keeps an explicit choice, warning when the engine lacks it and refusing when it failed its self-test', () => {
    expect(chooseDefaultRuntime('runc', ['runc', 'runsc'])).toEqual({ runtime: 'runc', warning: null, refusal: null });
    expect(chooseDefaultRuntime('runsc', null)).toEqual({ runtime: 'runsc', warning: null, refusal: null });
    expect(chooseDefaultRuntime('runsc', ['runc'])).toEqual({ runtime: 'runsc', warning: expect.stringContaining('has no such runtime (it has: runc)'), refusal: null });
    expect(chooseDefaultRuntime('runsc', ['runc', 'runsc'], new Map([['runsc', EINVAL]])).refusal).toMatch(
      new RegExp(`^SANDBOX_RUNTIME=runsc but runsc failed its self-test on the Docker engine: ${EINVAL.replace(/[()]/g, '\\$&')}; install gVisor .*, or set SANDBOX_RUNTIME=auto$`),
    );
    expect(chooseDefaultRuntime('runc', ['runc', 'runsc'], new Map([['runsc', EINVAL]]))).toEqual({ runtime: 'runc', warning: null, refusal: null });
  });
});
