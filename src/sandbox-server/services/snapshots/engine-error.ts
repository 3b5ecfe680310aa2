import { ConflictError, DomainError, RequestValidationError, UnavailableError } from '../../../errors/index.js';
import { RuntimeError, SnapshotTooLargeError } from '../../runtime/runtime.js';

/**
 * Runs an engine call of a snapshot verb: a final RuntimeError (the container is gone, an image is
 * missing) is a 409, since asking again will not help; any other one a 503 worth retrying. A
 * sandbox too large to snapshot is a 422 on the sandbox it names: it stays so until it holds less.
 */
export async function onEngine<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DomainError || !(error instanceof RuntimeError)) throw error;
    if (error instanceof SnapshotTooLargeError) {
      throw new RequestValidationError([{ in: 'path', field: ['id'], msg: `${what} refused: ${error.message}`, type: 'snapshot_too_large' }]);
    }
    if (error.final) throw new ConflictError(`${what} failed: ${error.message}`);
    throw new UnavailableError(`${what} failed: ${error.message}`, 1);
  }
}
