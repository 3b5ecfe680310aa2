import { describe, expect, it } from 'vitest';
import { agentProcessLimit } from '../../../src/sandbox-server/runtime/agent-process-limit.js';

describe('the agent process limit', () => {
  it('is set under gVisor only, below the PIDs limit that counts its kernel host tasks, and never below 8', () => {
    expect(agentProcessLimit('runsc', 512)).toBe(154);
    expect(agentProcessLimit('runsc', 96)).toBe(16);
    expect(agentProcessLimit('runsc', 50)).toBe(8);
    expect(agentProcessLimit('runsc', null)).toBeNull();
    // runc: the cgroup counts the agent's own processes, and RLIMIT_NPROC would count the uid host-wide.
    expect(agentProcessLimit('runc', 96)).toBeNull();
  });
});
