import { describe, expect, it } from 'vitest';
import type { DesiredState, SandboxStatus } from '../../../src/contracts/sandbox.js';
import type { ContainerState } from '../../../src/contracts/container.js';
import { computeStatus, type StatusInput } from '../../../src/sandbox-server/reconciler/status.js';

function input(overrides: Partial<StatusInput>): StatusInput {
  return {
    desired: 'RUNNING',
    container: null,
    alive: false,
    creating: false,
    hadContainer: false,
    previous: { status: 'STARTING', detail: null },
    failure: null,
    retrying: null,
    ...overrides,
  };
}

const observed = (state: ContainerState, exitCode: number | null = null, oomKilled = false) => ({ state, exitCode, oomKilled });

describe('computeStatus', () => {
  // [desired, container state, alive, expected status, expected detail (substring) or null]
  const containerTable: [DesiredState, ContainerState, boolean, SandboxStatus, string | null][] = [
    // OpenHands' mapping, with RUNNING only after the agent-server answered.
    ['RUNNING', 'running', true, 'RUNNING', null],
    ['RUNNING', 'running', false, 'STARTING', 'waiting for the agent-server'],
    ['RUNNING', 'paused', false, 'PAUSED', null],
    ['RUNNING', 'created', false, 'STARTING', null],
    ['RUNNING', 'restarting', false, 'STARTING', 'restarting'],
    ['RUNNING', 'removing', false, 'MISSING', 'being removed'],
    ['RUNNING', 'dead', false, 'ERROR', 'dead'],
    // Ours: an exited container wanted running is an error, not PAUSED.
    ['RUNNING', 'exited', false, 'ERROR', 'exited with code 137'],
    // A pause not yet taken leaves an answering container RUNNING; paused ones are PAUSED.
    ['PAUSED', 'running', true, 'RUNNING', null],
    ['PAUSED', 'paused', false, 'PAUSED', null],
    ['PAUSED', 'created', false, 'PAUSED', null],
    ['PAUSED', 'exited', false, 'PAUSED', 'resuming starts it again'],
    ['PAUSED', 'dead', false, 'ERROR', 'dead'],
  ];
  it.each(containerTable)('desired %s, container %s, alive %s -> %s', (desired, state, alive, status, detail) => {
    const result = computeStatus(input({ desired, container: observed(state, state === 'exited' ? 137 : null), alive }));
    expect(result.status).toBe(status);
    if (detail === null) expect(result.detail).toBeNull();
    else expect(result.detail).toContain(detail);
  });

  it('is STARTING while a create may still land, whatever the intent', () => {
    for (const desired of ['RUNNING', 'PAUSED', 'DELETED'] as const) {
      expect(computeStatus(input({ desired, creating: true })).status).toBe('STARTING');
    }
  });

  it('is MISSING when a container the row remembers is gone, and does not pretend otherwise', () => {
    expect(computeStatus(input({ hadContainer: true })).status).toBe('MISSING');
    expect(computeStatus(input({ desired: 'PAUSED', hadContainer: true })).status).toBe('MISSING');
    expect(computeStatus(input({ hadContainer: true, previous: { status: 'RUNNING', detail: null } })).detail).toContain('removed outside');
  });

  it('keeps a sandbox that failed for good ERROR when the container its create made and removed is gone', () => {
    const failed = { status: 'ERROR' as const, detail: 'image x cannot run the agent: it has no bash' };
    expect(computeStatus(input({ hadContainer: true, previous: failed }))).toEqual(failed);
    expect(computeStatus(input({ desired: 'PAUSED', hadContainer: true, previous: failed })).status).toBe('MISSING');
  });

  it('is STARTING before the first container and PAUSED when paused before it ever ran', () => {
    expect(computeStatus(input({})).status).toBe('STARTING');
    expect(computeStatus(input({ desired: 'PAUSED' }))).toEqual({ status: 'PAUSED', detail: null });
  });

  it('reports a deleted sandbox whose container is gone as MISSING "deleted"', () => {
    expect(computeStatus(input({ desired: 'DELETED', hadContainer: true }))).toEqual({ status: 'MISSING', detail: 'deleted' });
  });

  it('turns a final failure into ERROR with its detail, over anything observed', () => {
    expect(computeStatus(input({ container: observed('running'), alive: true, failure: 'no such image' }))).toEqual({
      status: 'ERROR',
      detail: 'no such image',
    });
  });

  it('keeps an earlier final create or start failure while the sandbox is still wanted running', () => {
    const previous = { status: 'ERROR' as const, detail: 'docker create failed: No such image: nope' };
    expect(computeStatus(input({ previous }))).toEqual(previous);
    expect(computeStatus(input({ previous, container: observed('created') }))).toEqual(previous);
    expect(computeStatus(input({ desired: 'PAUSED', previous, container: observed('created') })).status).toBe('PAUSED');
    expect(computeStatus(input({ desired: 'PAUSED', previous })).status).toBe('PAUSED');
  });

  it('says "out of memory" when the kernel killed the container at its memory limit', () => {
    expect(computeStatus(input({ container: observed('exited', 137, true) }))).toEqual({ status: 'ERROR', detail: 'out of memory' });
    expect(computeStatus(input({ container: observed('exited', 137, false) }))).toEqual({ status: 'ERROR', detail: 'container exited with code 137' });
  });

  it('keeps the status but says why when a step will be retried', () => {
    const result = computeStatus(input({ container: observed('running'), alive: true, desired: 'PAUSED', retrying: 'socket hang up' }));
    expect(result).toEqual({ status: 'RUNNING', detail: 'will retry: socket hang up' });
  });
});
