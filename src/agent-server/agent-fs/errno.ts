/** Errors shaped like Node's own system errors (`code`, `syscall`, `path`), so callers map both alike. */

/** A file that is neither a regular file nor a directory (FIFO, socket, device) where one was needed. */
export const NOT_REGULAR = 'EFTYPE';

const MESSAGES: Record<string, string> = {
  EACCES: 'permission denied',
  EEXIST: 'file already exists',
  EFBIG: 'file too large',
  EINVAL: 'invalid argument',
  EISDIR: 'illegal operation on a directory',
  ELOOP: 'too many symbolic links encountered',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  [NOT_REGULAR]: 'not a regular file',
};

export function errnoError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: ${MESSAGES[code] ?? code}, ${syscall} '${path}'`);
  return Object.assign(error, { code, syscall, path });
}

export function isErrno(error: unknown, ...codes: string[]): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' &&
    (codes.length === 0 || codes.includes((error as NodeJS.ErrnoException).code as string));
}

/** A path outside the tree an AgentFs was confined to (`within`). */
export class OutsideError extends Error {
  readonly code = 'EOUTSIDE';
  constructor(readonly path: string, readonly root: string) {
    super(`${path} is outside ${root}`);
  }
}
