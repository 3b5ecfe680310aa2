/**
 * The path a request line logs. A request without a valid key may come from inside a sandbox, as
 * many and as long as the agent likes (one filled 40 MB of logs in 43 s): its path is cut to
 * UNAUTHENTICATED_PATH_CHARS, with its full length beside it. A caller with a key gets it whole.
 */
export const UNAUTHENTICATED_PATH_CHARS = 128;

export function loggedPath(path: string, authenticated: boolean): { path: string; path_length?: number } {
  if (authenticated || path.length <= UNAUTHENTICATED_PATH_CHARS) return { path };
  return { path: `${path.slice(0, UNAUTHENTICATED_PATH_CHARS)}…`, path_length: path.length };
}
