/** A mistake in the command line: exit 2, with the one-line message and a pointer to --help. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the user can act on, already worded as the one line sandboxctl prints: exit 1. */
export class CliError extends Error {
  override name = 'CliError';
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
