import { timingSafeEqual } from 'node:crypto';

/**
 * Which of `digests` `candidate` equals, one answer per digest. Every digest is compared, with
 * timingSafeEqual, and none is skipped once one matched: the time taken tells a caller neither how
 * close a guess came nor which key it matched. Digests are of one length (SHA-256), as
 * timingSafeEqual requires.
 */
export function digestMatches(digests: readonly Buffer[], candidate: Buffer): boolean[] {
  return digests.map((digest) => timingSafeEqual(digest, candidate));
}

/** Whether `candidate` equals any of `digests`, compared as digestMatches compares them. */
export function digestMatchesAny(digests: readonly Buffer[], candidate: Buffer): boolean {
  return digestMatches(digests, candidate).includes(true);
}
