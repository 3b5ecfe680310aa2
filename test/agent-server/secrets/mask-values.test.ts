import { describe, expect, it } from 'vitest';
import { hideInLogs, withoutHiddenValues } from '../../../src/logger.js';
import { maskableValues, maskJson } from '../../../src/agent-server/secrets/mask-values.js';
import { createSecretVault } from '../../../src/agent-server/secrets/secret-vault.js';

describe('masking secret values', () => {
  it('hides every value in the strings of an event, longest first, and leaves its structure alone', () => {
    const values = maskableValues(['abc', 'abcdef', 'x']);
    expect(values).toEqual(['abcdef', 'abc']);
    const event = { kind: 'abc', id: 'abc', observation: { content: [{ type: 'text', text: 'abcdef then abc and x' }] } };
    expect(maskJson(event, values)).toEqual({
      kind: 'abc',
      id: 'abc',
      observation: { content: [{ type: 'text', text: '<secret_hidden> then <secret_hidden> and x' }] },
    });
    const untouched = { text: 'nothing here' };
    expect(maskJson(untouched, values)).toBe(untouched);
  });

  it('leaves images alone: a screenshot and an image data URL only match a value by chance', () => {
    const values = maskableValues(['AAA']);
    const shot = { kind: 'BrowserObservation', content: [{ type: 'text', text: 'saw AAA' }, { type: 'image', image_urls: ['data:image/png;base64,iVBORAAAw=='] }], screenshot_data: 'iVBORAAAw==' };
    expect(maskJson(shot, values)).toEqual({ ...shot, content: [{ type: 'text', text: 'saw <secret_hidden>' }, shot.content[1]] });
  });

  it('hides values handed to the vault in log lines, as JSON escapes them', () => {
    const value = 'line-one\n"quoted"-pass';
    createSecretVault({ MULTI: value });
    const line = JSON.stringify({ msg: `got ${value}` });
    expect(withoutHiddenValues(line)).toBe(JSON.stringify({ msg: 'got [redacted]' }));
    hideInLogs('zz');
    expect(withoutHiddenValues('{"msg":"zz"}')).toBe('{"msg":"zz"}');
  });
});
