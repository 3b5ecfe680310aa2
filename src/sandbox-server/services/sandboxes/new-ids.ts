import { randomBytes } from 'node:crypto';

/**
 * 16 random bytes as 32 lower-case hex digits: unguessable and collision-free in practice, valid
 * in a URL, a Docker name and a DNS label alike, so that a sandbox's preview host
 * (`{port}-{id}.{PREVIEW_DOMAIN}`) can name it: host names are case-insensitive.
 */
export function newSandboxId(): string {
  return randomBytes(16).toString('hex');
}

/** 32 random bytes as base64url; a fresh one per sandbox, so one leaked key opens one sandbox. */
export function newSessionApiKey(): string {
  return randomBytes(32).toString('base64url');
}
