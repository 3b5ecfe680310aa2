import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { PLACEHOLDER_PATTERN, type BrokeredSecret } from './brokered-secret.js';

/** What a swap did: the headers to send on, and the names of the secrets put in. */
export interface SwappedHeaders {
  headers: OutgoingHttpHeaders;
  used: string[];
}

const BASIC = /^(\s*basic\s+)([A-Za-z0-9+/=]+)(\s*)$/i;

/**
 * Puts each secret's value where its placeholder stands in `headers`, for the secrets meant for this
 * request's host (the caller passes only those). Any header qualifies; in `Authorization: Basic`
 * the placeholder is inside the base64 of `user:password` (as git sends a token), so that one is
 * decoded, swapped and encoded again. A placeholder of a secret not given stays as it is.
 */
export function swapPlaceholders(headers: IncomingHttpHeaders, secrets: readonly BrokeredSecret[]): SwappedHeaders {
  const byPlaceholder = new Map(secrets.map((secret) => [secret.placeholder, secret]));
  const used = new Set<string>();
  const swapText = (text: string) =>
    text.replace(PLACEHOLDER_PATTERN, (placeholder) => {
      const secret = byPlaceholder.get(placeholder);
      if (!secret) return placeholder;
      used.add(secret.name);
      return secret.value;
    });
  const swapValue = (name: string, value: string) => {
    const basic = name === 'authorization' || name === 'proxy-authorization' ? BASIC.exec(value) : null;
    if (basic) {
      const decoded = Buffer.from(basic[2] ?? '', 'base64').toString('utf8');
      const swapped = swapText(decoded);
      if (swapped !== decoded) return `${basic[1]}${Buffer.from(swapped, 'utf8').toString('base64')}${basic[3]}`;
    }
    return swapText(value);
  };
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.map((item) => swapValue(name, item)) : swapValue(name, value);
  }
  return { headers: out, used: [...used] };
}
