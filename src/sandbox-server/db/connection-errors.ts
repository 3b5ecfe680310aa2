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

/** `url` with its password replaced, fit for a log line or an error message. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'DATABASE_URL (unparsable)';
  }
}

/** The driver's error behind drizzle's "Failed query: ..." wrapper: the first in the cause chain with a code. */
function driverErrorOf(error: unknown): { code: string; message: string } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') return { code, message: typeof message === 'string' ? message : code };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Why the database at `url` could not be used, in words that say what to fix: authentication,
 * a missing database, or nothing answering; the password never appears.
 */
export function describeDatabaseFailure(error: unknown, url: string): string {
  const where = redactedUrl(url);
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  const address = parsed ? `${parsed.hostname}:${parsed.port || '5432'}` : 'its host';
  const database = parsed ? decodeURIComponent(parsed.pathname.slice(1)) : '';
  const cause = driverErrorOf(error);
  const detail = cause?.message ?? (error instanceof Error ? error.message : String(error));
  const reason = (() => {
    switch (cause?.code) {
      case '28P01':
      case '28000':
        return `authentication failed (${detail}): check the user and password in DATABASE_URL`;
      case '3D000':
        return `the database does not exist (${detail}): create it (createdb ${database || '<name>'}) or fix its name in DATABASE_URL`;
      case 'ECONNREFUSED':
        return `nothing accepts connections at ${address} (${detail}): is PostgreSQL running there, on that port?`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `the host of DATABASE_URL was not found (${detail})`;
      case 'CONNECT_TIMEOUT':
      case 'ETIMEDOUT':
      case 'EHOSTUNREACH':
        return `${address} did not answer (${detail}): is the host reachable from here?`;
      default:
        return detail;
    }
  })();
  return `cannot use the database at ${where}: ${reason}`;
}
