import { describe, expect, it } from 'vitest';
import type { DesiredState, SandboxStatus } from '../../../src/contracts/sandbox.js';
import { type PlanInput, planStep, type Step } from '../../../src/sandbox-server/reconciler/plan-step.js';
import type { ContainerState } from '../../../src/contracts/container.js';

function plan(desired: DesiredState, states: ContainerState[], extra: Partial<PlanInput> = {}): Step {
  return planStep({
    desired,
    containers: states.map((state, i) => ({ containerId: `c${i}`, state })),
    creating: false,
    hadContainer: false,
    previousStatus: 'STARTING',
    restartRequested: false,
    stoppedByEngine: false,
    ...extra,
  });
}

describe('planStep', () => {
  const table: [DesiredState, ContainerState | 'none', SandboxStatus, Step['kind']][] = [
    ['RUNNING', 'none', 'STARTING', 'create'],
    ['RUNNING', 'created', 'STARTING', 'start'],
    ['RUNNING', 'created', 'ERROR', 'none'],
    ['RUNNING', 'created', 'PAUSED', 'start'],
    ['RUNNING', 'running', 'RUNNING', 'none'],
    ['RUNNING', 'paused', 'PAUSED', 'unpause'],
    ['RUNNING', 'restarting', 'STARTING', 'none'],
    ['RUNNING', 'removing', 'RUNNING', 'none'],
    ['RUNNING', 'exited', 'RUNNING', 'none'],
    ['RUNNING', 'exited', 'ERROR', 'none'],
    ['RUNNING', 'exited', 'PAUSED', 'start'],
    ['RUNNING', 'dead', 'RUNNING', 'none'],
    ['PAUSED', 'none', 'STARTING', 'none'],
    ['PAUSED', 'running', 'RUNNING', 'pause'],
    ['PAUSED', 'paused', 'PAUSED', 'none'],
    ['PAUSED', 'exited', 'ERROR', 'none'],
    ['DELETED', 'running', 'RUNNING', 'remove'],
    ['DELETED', 'paused', 'PAUSED', 'remove'],
    ['DELETED', 'none', 'RUNNING', 'remove'],
  ];
  it.each(table)('desired %s, container %s, was %s -> %s', (desired, state, previousStatus, kind) => {
    expect(plan(desired, state === 'none' ? [] : [state], { previousStatus }).kind).toBe(kind);
  });

  it('never creates while a create may still land', () => {
    expect(plan('RUNNING', [], { creating: true })).toEqual({ kind: 'none' });
  });

  it('leaves a container its create is still starting to that create', () => {
    expect(plan('RUNNING', ['created'], { creating: true })).toEqual({ kind: 'none' });
    expect(plan('PAUSED', ['running'], { creating: true })).toEqual({ kind: 'none' });
  });

  it('does not recreate a container that vanished, nor retry a create that failed for good', () => {
    expect(plan('RUNNING', [], { hadContainer: true })).toEqual({ kind: 'none' });
    expect(plan('RUNNING', [], { previousStatus: 'ERROR' })).toEqual({ kind: 'none' });
  });

  it('waits for an in-flight create before deleting, then removes everything of the sandbox', () => {
    expect(plan('DELETED', [], { creating: true })).toEqual({ kind: 'none' });
    expect(plan('DELETED', ['running', 'exited'])).toEqual({ kind: 'remove', containerIds: ['c0', 'c1'] });
  });

  it('replaces every container of a sandbox asked to restart, once no create is in flight, but not when deleted', () => {
    expect(plan('RUNNING', ['exited'], { previousStatus: 'ERROR', restartRequested: true })).toEqual({ kind: 'restart', containerIds: ['c0'] });
    expect(plan('RUNNING', ['running', 'running'], { restartRequested: true })).toEqual({ kind: 'restart', containerIds: ['c0', 'c1'] });
    expect(plan('RUNNING', [], { previousStatus: 'MISSING', hadContainer: true, restartRequested: true })).toEqual({ kind: 'restart', containerIds: [] });
    expect(plan('RUNNING', [], { restartRequested: true, creating: true })).toEqual({ kind: 'none' });
    expect(plan('DELETED', ['exited'], { restartRequested: true })).toEqual({ kind: 'remove', containerIds: ['c0'] });
  });

  it('starts a container the engine stopped when it went down, but not one that died on its own', () => {
    expect(plan('RUNNING', ['exited'], { previousStatus: 'ERROR', stoppedByEngine: true })).toEqual({ kind: 'start', containerId: 'c0' });
    expect(plan('RUNNING', ['exited'], { previousStatus: 'RUNNING', stoppedByEngine: false })).toEqual({ kind: 'none' });
  });

  it('takes no step when two containers claim one live sandbox', () => {
    expect(plan('RUNNING', ['running', 'running'])).toEqual({ kind: 'none' });
    expect(plan('PAUSED', ['running', 'created'])).toEqual({ kind: 'none' });
  });
});
