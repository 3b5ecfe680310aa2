import { createRequire } from 'node:module';

/**
 * The OpenHands client's published ES module build finds its WebSocket implementation with
 * `require('ws')`, which exists for its CommonJS users but not in an ES module scope; this gives it
 * one, as those users have. Call before importing the client.
 */
export function provideRequireForOpenHandsClient(): void {
  (globalThis as { require?: NodeJS.Require }).require ??= createRequire(import.meta.url);
}
