import { describe, expect, it } from 'vitest';
import { PullProgress, registryHostOf } from '../../../src/sandbox-server/runtime/image-pull.js';
import { pathOf } from '../../../src/sandbox-server/runtime/image-fitness.js';

describe('image pulls', () => {
  it('reads the registry host of an image reference as Docker does', () => {
    expect(registryHostOf('python:3.12-slim')).toBe('docker.io');
    expect(registryHostOf('library/python')).toBe('docker.io');
    expect(registryHostOf('index.docker.io/library/python')).toBe('docker.io');
    expect(registryHostOf('ghcr.io/openhands/agent-server:1')).toBe('ghcr.io');
    expect(registryHostOf('127.0.0.1:5000/team/app')).toBe('127.0.0.1:5000');
    expect(registryHostOf('localhost/app')).toBe('localhost');
  });

  it('sums the layers of a pull into one line of bytes and layers', () => {
    const progress = new PullProgress('registry.example.com/app:1');
    progress.note({ status: 'Pulling from app', id: '1' });
    progress.note({ status: 'Pulling fs layer', id: 'aaa' });
    progress.note({ status: 'Pulling fs layer', id: 'bbb' });
    progress.note({ status: 'Downloading', id: 'aaa', progressDetail: { current: 1024 * 1024, total: 4 * 1024 * 1024 } });
    progress.note({ status: 'Downloading', id: 'bbb', progressDetail: { current: 512 * 1024, total: 1024 * 1024 } });
    expect(progress.line()).toBe('pulling image registry.example.com/app:1: 1.5 of 5.0 MB, 0 of 2 layers');
    progress.note({ status: 'Download complete', id: 'bbb' });
    progress.note({ status: 'Pull complete', id: 'bbb' });
    expect(progress.line()).toBe('pulling image registry.example.com/app:1: 2.0 of 5.0 MB, 1 of 2 layers');
  });

  it("reads an image's PATH, Docker's default when it sets none", () => {
    expect(pathOf(['LANG=C', 'PATH=/opt/tool/bin:/usr/bin:relative'])).toEqual(['/opt/tool/bin', '/usr/bin']);
    expect(pathOf(undefined)).toEqual(['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']);
  });
});
