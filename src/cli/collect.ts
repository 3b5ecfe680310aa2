/** The first `limit` items of an async sequence (all of them without a limit). */
export async function collect<T>(items: AsyncIterable<T>, limit = Number.POSITIVE_INFINITY): Promise<T[]> {
  const collected: T[] = [];
  if (limit <= 0) return collected;
  for await (const item of items) {
    collected.push(item);
    if (collected.length >= limit) break;
  }
  return collected;
}
