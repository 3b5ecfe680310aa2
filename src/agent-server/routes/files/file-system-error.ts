import { DomainError, ForbiddenError, NotFoundError, validationError } from '../../../errors/index.js';
import { NOT_REGULAR } from '../../agent-fs/index.js';

/**
 * What a failed file system call means to the caller: the answers OpenHands gives (404 "File not
 * found") for a missing file, 422 on `path` for a path that cannot name a file, 403 when the
 * agent's user may not touch it. Anything else is not the caller's fault and stays a 500.
 */
export function fileSystemError(error: unknown): unknown {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return new NotFoundError('File not found');
    case 'EISDIR':
      return pathIsDirectoryError();
    case NOT_REGULAR:
      return notRegularFileError();
    case 'ENOTDIR':
    case 'EEXIST':
      return pathError('A parent of the path is not a directory');
    case 'ENAMETOOLONG':
      return pathError('File name too long');
    case 'ELOOP':
      return pathError('Too many levels of symbolic links');
    case 'EACCES':
    case 'EPERM':
      return new ForbiddenError('Permission denied');
    default:
      return error;
  }
}

export function pathIsDirectoryError(): DomainError {
  return pathError('Path is a directory');
}

export function notRegularFileError(): DomainError {
  return pathError('Path is not a regular file');
}

function pathError(msg: string): DomainError {
  return validationError('query', ['path'], msg);
}
