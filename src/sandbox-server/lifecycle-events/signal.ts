/**
 * A promise and the function that settles it, to wake every waiter at once and start a new round
 * (Promise.withResolvers, which Node 20 lacks).
 */
export function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
