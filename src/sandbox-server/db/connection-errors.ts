/**
 * Codes that say the database could not be reached or went away mid-query, as opposed to a query it
 * refused: Node's socket errors, postgres.js's connection errors, and the
 * PostgreSQL SQLSTATE classes 08 (connection exception) and 57P (shutting down, starting up).
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** Whether the error (or one it wraps, as drizzle wraps the driver's) is the database being away. */
export function isConnectionError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
