import { UpstreamError } from '../../errors/index.js';

/** Why a request to `port` got no answer: nothing accepts connections there. */
export function nothingListens(port: number): UpstreamError {
  return new UpstreamError(`Nothing answers on port ${port} in the sandbox: start the app there, listening on 0.0.0.0, 127.0.0.1 or ::1`);
}

/** The title of the page a browser gets instead. */
export function nothingListensTitle(port: number): string {
  return `Nothing on port ${port} yet`;
}
