import { describe, expect, it } from 'vitest';
import { previewAddressOf, previewHostName } from '../../../src/sandbox-server/preview/preview-host.js';
import { signPreviewToken, verifyPreviewToken } from '../../../src/sandbox-server/preview/preview-token.js';

const key = { sessionApiKey: 'session-key', previewKey: null };
const inAnHour = new Date(Date.now() + 3_600_000);

describe('preview tokens', () => {
  it('pass for their sandbox and port until they expire', () => {
    const token = signPreviewToken(key, 'sb1', 5173, inAnHour);
    expect(verifyPreviewToken(key, 'sb1', 5173, token)).toBe(true);
    expect(verifyPreviewToken(key, 'sb1', 5173, token, new Date(inAnHour.getTime() + 1_000))).toBe(false);
  });

  it('fail for another sandbox or port, a changed expiry or signature, and after either key changes', () => {
    const token = signPreviewToken(key, 'sb1', 5173, inAnHour);
    const [version, expiry, mac] = token.split('.') as [string, string, string];
    expect(verifyPreviewToken(key, 'sb2', 5173, token)).toBe(false);
    expect(verifyPreviewToken(key, 'sb1', 5174, token)).toBe(false);
    expect(verifyPreviewToken(key, 'sb1', 5173, `${version}.${Number(expiry) + 3600}.${mac}`)).toBe(false);
    expect(verifyPreviewToken(key, 'sb1', 5173, `${version}.${expiry}.${mac.slice(1)}A`)).toBe(false);
    expect(verifyPreviewToken({ ...key, previewKey: 'revoked once' }, 'sb1', 5173, token)).toBe(false);
    expect(verifyPreviewToken({ ...key, sessionApiKey: 'restarted' }, 'sb1', 5173, token)).toBe(false);
    for (const junk of ['', 'v1', 'v1..', `v2.${expiry}.${mac}`, `${token}.more`, 'v1.-5.abc']) expect(verifyPreviewToken(key, 'sb1', 5173, junk), junk).toBe(false);
  });
});

describe('preview hosts', () => {
  it('name a port of a sandbox under the domain, whatever the case and port of the Host', () => {
    expect(previewAddressOf('5173-0af3.preview.example.com', 'preview.example.com')).toEqual({ sandboxId: '0af3', port: 5173 });
    expect(previewAddressOf('80-ABC.Localhost:3000', 'localhost')).toEqual({ sandboxId: 'abc', port: 80 });
    expect(previewHostName('localhost', 'abc', 8080)).toBe('8080-abc.localhost');
  });

  it('name nothing for other hosts, ports out of range, or ids no host name can hold', () => {
    for (const host of ['localhost:3000', 'preview.example.com', '5173-x.other.com', '0-abc.localhost', '70000-abc.localhost', 'abc.localhost', '5173-.localhost', '5173-a_b.localhost', undefined]) {
      expect(previewAddressOf(host, 'localhost'), String(host)).toBeNull();
    }
    expect(previewAddressOf('5173-abc.localhost', null)).toBeNull();
    expect(previewHostName('localhost', 'Mixed_Case', 80)).toBeNull();
  });
});
