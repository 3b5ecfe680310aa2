import { UnavailableError } from '../../errors/index.js';

/** An engine restart takes seconds; its sandboxes are started again right after. */
const ENGINE_RETRY_AFTER_SECONDS = 5;

/** With its engine away the sandbox is down for a while, not broken: worth asking again later. */
export function engineAway(id: string): UnavailableError {
  return new UnavailableError(`Sandbox ${id} cannot be reached: its container engine is unavailable; retry shortly`, ENGINE_RETRY_AFTER_SECONDS);
}
