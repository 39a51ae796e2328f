import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { mapInOrder } from '../../src/connectors/toolkit/in-order.ts';

describe('mapInOrder', () => {
  test('keeps at most `width` calls in flight and yields in the items’ order, whatever finishes first', async () => {
    let inFlight = 0;
    let most = 0;
    const delays = [30, 5, 20, 1, 10, 2];
    const out: string[] = [];
    for await (const [item, result] of mapInOrder(delays, 3, async (ms) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await sleep(ms);
      inFlight--;
      return `${ms}ms`;
    })) {
      out.push(`${item}:${result}`);
    }
    assert.deepEqual(
      out,
      delays.map((d) => `${d}:${d}ms`),
    );
    assert.equal(most, 3);
  });

  test('a rejection surfaces at its turn; calls left in flight when the consumer stops raise nothing', async () => {
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const [item] of mapInOrder([1, 2, 3, 4], 4, async (n) => {
        await sleep(n);
        if (n >= 2) throw new Error(`call ${n} failed`);
        return n;
      })) {
        seen.push(item);
      }
    }, /call 2 failed/);
    assert.deepEqual(seen, [1]);
    await sleep(20); // calls 3 and 4 rejected meanwhile: no unhandled rejection ends the test process
  });
});
