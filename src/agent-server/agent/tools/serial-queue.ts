/**
 * Runs tasks one after another. The loop may execute parallel tool calls concurrently, but one
 * shell can run one command at a time and two edits of one file must not interleave.
 */
export function createSerialQueue(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const result = tail.then(task);
    tail = result.catch(() => undefined);
    return result;
  };
}
