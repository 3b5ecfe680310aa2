import { RuntimeError } from './runtime.js';

export function statusCodeOf(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'statusCode' in error ? Number(error.statusCode) : undefined;
}

export function dockerMessageOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const json = (error as { json?: { message?: unknown } }).json;
  if (json && typeof json.message === 'string') return json.message;
  return error instanceof Error ? error.message : String(error);
}

/** Socket errors and 5xx are retryable; the caller names the statuses that are final for its verb. */
export function toRuntimeError(error: unknown, verb: string, finalStatuses: number[] = []): RuntimeError {
  const status = statusCodeOf(error);
  const final = status !== undefined && finalStatuses.includes(status);
  return new RuntimeError(`docker ${verb} failed: ${dockerMessageOf(error)}`, final);
}
