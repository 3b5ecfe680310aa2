import { describe, expect, it } from 'vitest';
import { chooseDefaultRuntime } from '../../../src/sandbox-server/runtime/default-runtime.js';

describe('chooseDefaultRuntime', () => {
  it('auto takes gVisor when the engine lists runsc, and warns once when it settles for runc', () => {
    expect(chooseDefaultRuntime('auto', ['io.containerd.runc.v2', 'runc', 'runsc'])).toEqual({ runtime: 'runsc', warning: null });
    expect(chooseDefaultRuntime('auto', ['runc'])).toEqual({
      runtime: 'runc',
      warning: expect.stringMatching(/^sandboxes run under runc, not gVisor: the Docker engine has no runsc/),
    });
    expect(chooseDefaultRuntime('auto', null)).toEqual({ runtime: 'runc', warning: expect.stringContaining('could not be asked') });
  });

  it('keeps an explicit choice, warning when the engine lacks it', () => {
    expect(chooseDefaultRuntime('runc', ['runc', 'runsc'])).toEqual({ runtime: 'runc', warning: null });
    expect(chooseDefaultRuntime('runsc', null)).toEqual({ runtime: 'runsc', warning: null });
    expect(chooseDefaultRuntime('runsc', ['runc'])).toEqual({ runtime: 'runsc', warning: expect.stringContaining('has no such runtime (it has: runc)') });
  });
});
