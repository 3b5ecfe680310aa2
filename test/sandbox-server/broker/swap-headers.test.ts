import { describe, expect, it } from 'vitest';
import { conversationPlaceholder, hostMatches, secretsForHost, specPlaceholder, type BrokeredSecret } from '../../../src/sandbox-server/broker/brokered-secret.js';
import { swapPlaceholders } from '../../../src/sandbox-server/broker/swap-headers.js';

const token: BrokeredSecret = { name: 'GITHUB_TOKEN', placeholder: specPlaceholder('session-key', 'GITHUB_TOKEN'), value: 'ghp_real', hosts: ['github.com', '*.github.com'] };
const other: BrokeredSecret = { name: 'NPM_TOKEN', placeholder: conversationPlaceholder('session-key', 'conversation-1', 'NPM_TOKEN'), value: 'npm_real', hosts: ['registry.npmjs.org'] };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('swapPlaceholders', () => {
  it('puts the value in a bearer token, any header, and several places in one value', () => {
    const { headers, used } = swapPlaceholders(
      { authorization: `Bearer ${token.placeholder}`, 'x-api-key': `${token.placeholder},${token.placeholder}`, accept: 'text/plain' },
      [token],
    );
    expect(headers).toEqual({ authorization: 'Bearer ghp_real', 'x-api-key': 'ghp_real,ghp_real', accept: 'text/plain' });
    expect(used).toEqual(['GITHUB_TOKEN']);
  });

  it('swaps inside basic credentials, as git sends a token', () => {
    const { headers } = swapPlaceholders({ authorization: basic('x-access-token', token.placeholder) }, [token]);
    expect(headers.authorization).toBe(basic('x-access-token', 'ghp_real'));
    expect(swapPlaceholders({ authorization: basic(token.placeholder, '') }, [token]).headers.authorization).toBe(basic('ghp_real', ''));
  });

  it('leaves the placeholders of secrets not given, and headers without any, as they are', () => {
    const headers = { authorization: `Bearer ${other.placeholder}`, 'x-list': ['a=1', `b=${other.placeholder}`], 'x-basic': basic('u', other.placeholder) };
    const swapped = swapPlaceholders(headers, [token]);
    expect(swapped.headers).toEqual(headers);
    expect(swapped.used).toEqual([]);
    expect(swapPlaceholders({ authorization: basic('u', other.placeholder) }, [token]).headers.authorization).toBe(basic('u', other.placeholder));
  });

  it('swaps each item of a repeated header', () => {
    expect(swapPlaceholders({ 'set-thing': [token.placeholder, 'x'] }, [token]).headers['set-thing']).toEqual(['ghp_real', 'x']);
  });

  it('does not take a longer token for a placeholder it starts', () => {
    const header = `Bearer ${token.placeholder}x`;
    expect(swapPlaceholders({ authorization: header }, [token]).headers.authorization).toBe('Bearer ghp_realx');
    expect(swapPlaceholders({ authorization: `Bearer ${token.placeholder.slice(0, -1)}` }, [token]).used).toEqual([]);
  });
});

describe('the hosts a secret goes to', () => {
  it('matches exact names and wildcards over subdomains, ignoring case and a final dot', () => {
    expect(hostMatches('GitHub.com.', 'github.com')).toBe(true);
    expect(hostMatches('api.github.com', '*.github.com')).toBe(true);
    expect(hostMatches('a.b.github.com', '*.github.com')).toBe(true);
    expect(hostMatches('github.com', '*.github.com')).toBe(false);
    expect(hostMatches('evilgithub.com', '*.github.com')).toBe(false);
    expect(hostMatches('github.com.evil.org', 'github.com')).toBe(false);
  });

  it('picks the secrets meant for a host', () => {
    expect(secretsForHost([token, other], 'api.github.com').map((s) => s.name)).toEqual(['GITHUB_TOKEN']);
    expect(secretsForHost([token, other], 'example.com')).toEqual([]);
  });

  it('derives a spec secret placeholder from the session key, different per key and name', () => {
    const a = specPlaceholder('key-1', 'GITHUB_TOKEN');
    expect(a).toMatch(/^sbx_brokered_[A-Za-z0-9_-]{43}$/);
    expect(specPlaceholder('key-1', 'GITHUB_TOKEN')).toBe(a);
    expect(specPlaceholder('key-2', 'GITHUB_TOKEN')).not.toBe(a);
    expect(specPlaceholder('key-1', 'NPM_TOKEN')).not.toBe(a);
    const conversation = conversationPlaceholder('key-1', 'conversation-1', 'GITHUB_TOKEN');
    expect(conversation).toMatch(/^sbx_brokered_[A-Za-z0-9_-]{43}$/);
    expect(conversation).not.toBe(a);
    expect(conversationPlaceholder('key-1', 'conversation-2', 'GITHUB_TOKEN')).not.toBe(conversation);
  });
});
