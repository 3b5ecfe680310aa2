import { describe, expect, it } from 'vitest';
import type { SandboxRow } from '../../../src/sandbox-server/db/schema.js';
import { toSandboxInfo, withPreviewUrls } from '../../../src/sandbox-server/services/sandboxes/sandbox-info.js';

const row: SandboxRow = {
  id: 'abc',
  specId: 'spec',
  engine: 'local',
  createdByUserId: null,
  desiredState: 'RUNNING',
  status: 'STARTING',
  statusDetail: null,
  sessionApiKey: 'secret-key',
  previewKey: null,
  containerId: null,
  hostPorts: null,
  hostAddress: null,
  restartGeneration: 0,
  snapshotId: null,
  image: null,
  egress: null,
  observedGeneration: 0,
  agentServerVersion: '0.1.0+0123456789ab',
  lastActiveAt: new Date('2030-01-01T00:00:00Z'),
  createdAt: new Date('2030-01-01T00:00:00.123Z'),
  updatedAt: new Date('2030-01-01T00:00:00Z'),
  deletedAt: null,
  poolFingerprint: null,
  claimedAt: null,
};

describe('toSandboxInfo', () => {
  it('hides the session key and URLs unless RUNNING', () => {
    for (const status of ['STARTING', 'PAUSED', 'ERROR', 'MISSING'] as const) {
      expect(toSandboxInfo({ ...row, status, statusDetail: 'container exited with code 137', hostPorts: { AGENT_SERVER: 4000 } })).toEqual({
        id: 'abc',
        created_by_user_id: null,
        sandbox_spec_id: 'spec',
        status,
        status_detail: status === 'PAUSED' ? null : 'container exited with code 137',
        session_api_key: null,
        exposed_urls: null,
        created_at: '2030-01-01T00:00:00.123Z',
        agent_server_version: '0.1.0+0123456789ab',
        engine: 'local',
      });
    }
  });

  it('gives the key and one URL per published port, by name, on its engine\'s advertise host, while RUNNING', () => {
    const info = toSandboxInfo({
      ...row,
      status: 'RUNNING',
      createdByUserId: 'u1',
      engine: 'e1',
      hostAddress: '127.0.0.2',
      hostPorts: { WORKER_1: 4002, AGENT_SERVER: 4000, VSCODE: 4001 },
    });
    expect(info).toMatchObject({ status: 'RUNNING', created_by_user_id: 'u1', session_api_key: 'secret-key', engine: 'e1' });
    expect(info.exposed_urls).toEqual([
      { name: 'AGENT_SERVER', url: 'http://127.0.0.2:4000', port: 4000 },
      { name: 'VSCODE', url: 'http://127.0.0.2:4001', port: 4001 },
      { name: 'WORKER_1', url: 'http://127.0.0.2:4002', port: 4002 },
    ]);
  });

  it('says RUNNING without URLs when no port was published', () => {
    expect(toSandboxInfo({ ...row, status: 'RUNNING' }).exposed_urls).toBeNull();
  });
});

describe('withPreviewUrls', () => {
  const running: SandboxRow = { ...row, status: 'RUNNING', hostAddress: '10.0.0.5', hostPorts: { AGENT_SERVER: 32768, VSCODE: 32769, MY_APP: 32770 } };

  it('gives every exposed port but AGENT_SERVER its preview URL under the base, keeping its host port', () => {
    const info = withPreviewUrls(toSandboxInfo(running), 'https://sandboxes.example.com/');
    expect(info.exposed_urls).toEqual([
      { name: 'AGENT_SERVER', url: 'http://10.0.0.5:32768', port: 32768 },
      { name: 'MY_APP', url: 'https://sandboxes.example.com/api/v1/sandboxes/abc/ports/MY_APP/', port: 32770 },
      { name: 'VSCODE', url: 'https://sandboxes.example.com/api/v1/sandboxes/abc/ports/VSCODE/', port: 32769 },
    ]);
  });

  it('leaves a sandbox that is not running without URLs', () => {
    expect(withPreviewUrls(toSandboxInfo(row), 'http://127.0.0.1:8000').exposed_urls).toBeNull();
  });
});
