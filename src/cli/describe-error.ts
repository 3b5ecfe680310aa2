import { EventStreamClosedError, SandboxServerError, SandboxServerUnreachableError } from '../client/index.js';
import type { ValidationErrorItem } from '../http/errors.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, UsageError } from './cli-error.js';

export interface ErrorContext {
  url: string;
  apiKeyGiven: boolean;
}

/** The one line sandboxctl prints for a failure, naming what to fix, and the exit code. */
export function describeError(error: unknown, context: ErrorContext): { message: string; exitCode: number } {
  if (error instanceof UsageError) return { message: error.message, exitCode: EXIT_USAGE };
  return { message: failureMessage(error, context), exitCode: EXIT_FAILURE };
}

function failureMessage(error: unknown, context: ErrorContext): string {
  if (error instanceof CliError) return error.message;
  if (error instanceof SandboxServerUnreachableError) {
    return `cannot reach sandbox-server at ${context.url}: is it running? set --url or SANDBOX_SERVER_URL`;
  }
  if (error instanceof SandboxServerError) return serverErrorMessage(error, context);
  if (error instanceof EventStreamClosedError) {
    if (error.code === 4001) return `the sandbox's agent-server refused the event stream: ${error.reason}`;
    return `the event stream was closed: ${error.reason || `code ${error.code}`}`;
  }
  return `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
}

function serverErrorMessage(error: SandboxServerError, context: ErrorContext): string {
  if (error.status === 401) {
    return context.apiKeyGiven
      ? `sandbox-server at ${context.url} rejected the API key: check --api-key or SANDBOX_SERVER_API_KEY`
      : `sandbox-server at ${context.url} needs an API key: set --api-key or SANDBOX_SERVER_API_KEY`;
  }
  if (typeof error.detail !== 'string') return `invalid request: ${validationMessage(error.detail)}`;
  return `${error.detail} (HTTP ${error.status})`;
}

/** `body.image: Field required` -> `image: Field required`: the CLI user never wrote a body. */
function validationMessage(items: ValidationErrorItem[]): string {
  return items
    .map((item) => {
      const where = item.loc[0] === 'body' || item.loc[0] === 'query' || item.loc[0] === 'path' ? item.loc.slice(1) : item.loc;
      return where.length > 0 ? `${where.join('.')}: ${item.msg}` : item.msg;
    })
    .join('; ');
}
