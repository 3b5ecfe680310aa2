import { describe, expect, it } from 'vitest';
import type { SandboxRow, SandboxSpecRow } from '../../../src/sandbox-server/db/schema.js';
import { decidePolicy } from '../../../src/sandbox-server/reconciler/policies.js';

const now = new Date('2025-01-01T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

function spec(overrides: Partial<SandboxSpecRow>): SandboxSpecRow {
  return {
    id: 'spec',
    image: 'img',
    command: null,
    initialEnv: {},
    secretEnv: [],
    secretHosts: {},
    workingDir: '/workspace',
    exposedPorts: [],
    cpus: null,
    memoryMb: null,
    pidsLimit: null,
    diskMb: null,
    runtime: 'runc',
    network: 'internet',
    egress: { allow: [], deny: [] },
    idlePauseSeconds: null,
    ttlSeconds: null,
    resumeOnAccess: true,
    warmPoolSize: 0,
    warmPoolFingerprint: null,
    engineLabels: {},
    movable: true,
    isDefault: false,
    buildStatus: null,
    buildDetail: null,
    buildCached: false,
    buildStartedAt: null,
    buildFinishedAt: null,
    createdAt: ago(10_000),
    deletedAt: null,
    ...overrides,
  };
}

function row(overrides: Partial<SandboxRow>): SandboxRow {
  return {
    id: 'sb',
    specId: 'spec',
    engine: 'local',
    createdByUserId: null,
    desiredState: 'RUNNING',
    status: 'RUNNING',
    statusDetail: null,
    sessionApiKey: 'key',
    previewKey: null,
    containerId: 'c',
    hostPorts: null,
    hostAddress: null,
    restartGeneration: 0,
    snapshotId: null,
    image: null,
    egress: null,
    observedGeneration: 0,
    agentServerVersion: null,
    lastActiveAt: ago(0),
    createdAt: ago(0),
    updatedAt: ago(0),
    deletedAt: null,
    poolFingerprint: null,
    claimedAt: null,
    ...overrides,
  };
}

describe('decidePolicy', () => {
  it('pauses a running sandbox idle for at least idlePauseSeconds', () => {
    const idle = spec({ idlePauseSeconds: 300 });
    expect(decidePolicy(row({ lastActiveAt: ago(300) }), idle, now)).toEqual({ sandboxId: 'sb', desired: 'PAUSED', reason: 'idle' });
    expect(decidePolicy(row({ lastActiveAt: ago(299) }), idle, now)).toBeNull();
  });

  it('leaves unclaimed warm-pool members alone: waiting idle is their job, and their life starts when claimed', () => {
    const strict = spec({ idlePauseSeconds: 1, ttlSeconds: 1 });
    expect(decidePolicy(row({ poolFingerprint: 'f', lastActiveAt: ago(3600), createdAt: ago(3600) }), strict, now)).toBeNull();
  });

  it('leaves sandboxes that are not running, or not wanted running, alone when idle', () => {
    const idle = spec({ idlePauseSeconds: 1 });
    expect(decidePolicy(row({ lastActiveAt: ago(60), status: 'STARTING' }), idle, now)).toBeNull();
    expect(decidePolicy(row({ lastActiveAt: ago(60), desiredState: 'PAUSED', status: 'PAUSED' }), idle, now)).toBeNull();
    expect(decidePolicy(row({ lastActiveAt: ago(60) }), spec({}), now)).toBeNull();
  });

  it('deletes a sandbox ttlSeconds after it was created, paused or not, and before idling matters', () => {
    const ttl = spec({ ttlSeconds: 3600, idlePauseSeconds: 1 });
    const expected = { sandboxId: 'sb', desired: 'DELETED', reason: 'ttl' };
    expect(decidePolicy(row({ createdAt: ago(3600), lastActiveAt: ago(60) }), ttl, now)).toEqual(expected);
    expect(decidePolicy(row({ createdAt: ago(4000), desiredState: 'PAUSED', status: 'PAUSED' }), ttl, now)).toEqual(expected);
    expect(decidePolicy(row({ createdAt: ago(3599) }), spec({ ttlSeconds: 3600 }), now)).toBeNull();
  });

  it('does nothing to a sandbox already being deleted', () => {
    expect(decidePolicy(row({ desiredState: 'DELETED', createdAt: ago(10) }), spec({ ttlSeconds: 1 }), now)).toBeNull();
  });
});
