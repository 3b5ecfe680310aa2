import { randomBytes } from 'node:crypto';

/**
 * 16 random bytes as base64url: 22 URL-safe characters, unguessable and collision-free in
 * practice. An id starting with "-" or "_" is drawn again (1 draw in 32), since a leading "-"
 * reads as an option on command lines and Docker names must start with a letter or digit.
 */
export function newSandboxId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}

/** 32 random bytes as base64url; a fresh one per sandbox, so one leaked key opens one sandbox. */
export function newSessionApiKey(): string {
  return randomBytes(32).toString('base64url');
}
