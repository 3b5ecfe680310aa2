import { describe, expect, it } from 'vitest';
import { diskVerdict } from '../../../src/sandbox-server/reconciler/disk-watch.js';
import { computeStatus, DISK_LIMIT_EXCEEDED } from '../../../src/sandbox-server/reconciler/status.js';

const MB = 1024 * 1024;

describe('the disk limit', () => {
  it('counts the writable layer and the data volume together, and says what it found', () => {
    expect(diskVerdict({ writableBytes: 40 * MB, dataBytes: 24 * MB }, 64)).toBeNull();
    expect(diskVerdict({ writableBytes: 40 * MB, dataBytes: 24 * MB + 1 }, 64)).toBe(
      'disk limit exceeded: it held 65 MB (writable layer 40 MB, data volume 25 MB) of its 64 MB (disk_mb), so it was stopped; ' +
        'resuming starts a new container on the same data volume',
    );
    expect(diskVerdict({ writableBytes: 2000 * MB, dataBytes: null }, 1024)).toMatch(/^disk limit exceeded: it held 2,000 MB \(writable layer 2,000 MB, data volume not counted: its image has no du\) of its 1,024 MB/);
  });

  it('keeps the reason of a sandbox it stopped once the container shows exited, where any other exit reads as its code', () => {
    const stopped = { status: 'ERROR' as const, detail: `${DISK_LIMIT_EXCEEDED}: it held 65 MB` };
    const exited = { state: 'exited' as const, exitCode: 137, oomKilled: false };
    const base = { desired: 'RUNNING' as const, container: exited, alive: false, creating: false, hadContainer: true, failure: null, retrying: null };
    expect(computeStatus({ ...base, previous: stopped })).toEqual(stopped);
    expect(computeStatus({ ...base, previous: { status: 'RUNNING', detail: null } })).toEqual({ status: 'ERROR', detail: 'container exited with code 137' });
    // Resumed, it runs again (a new generation starts from STARTING), and a pause shows as a pause.
    expect(computeStatus({ ...base, container: { ...exited, state: 'running' }, alive: true, previous: stopped })).toEqual({ status: 'RUNNING', detail: null });
    expect(computeStatus({ ...base, desired: 'PAUSED', previous: stopped }).status).toBe('PAUSED');
  });
});
