import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A caller's id is kept so one request can be followed across services (a client, the control
 * plane, the sandbox's agent-server behind the proxy). It goes into every log line of the request,
 * so only short ids of plain characters are trusted; anything else is replaced.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
