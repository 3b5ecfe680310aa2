/**
 * A setting that cannot be used, found at start: its message is one line meant for the operator,
 * and the program exits with status 2. Not a DomainError: it never reaches an HTTP answer.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
