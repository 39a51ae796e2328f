/**
 * Bounded concurrency with ordered results, for connectors that list documents cheaply and then fetch
 * the bodies of the changed ones: a few requests in flight hide the source's latency, while documents are
 * still yielded (and checkpointed) in listing order.
 */

/**
 * `fn` over `items` with up to `width` calls in flight, yielding `[item, result]` in the order of `items`.
 * A call that rejects rethrows when its turn comes. Calls still in flight when the consumer stops are
 * left to settle with their rejections handled (cancellation aborts their requests through the signal).
 */
export async function* mapInOrder<T, R>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<R>,
): AsyncGenerator<[T, R]> {
  const pending: Array<{ item: T; result: Promise<R> }> = [];
  let next = 0;
  const fill = () => {
    while (pending.length < width && next < items.length) {
      const item = items[next++]!;
      const result = fn(item);
      result.catch(() => undefined);
      pending.push({ item, result });
    }
  };
  fill();
  while (pending.length > 0) {
    const head = pending.shift()!;
    const result = await head.result;
    fill();
    yield [head.item, result];
  }
}
