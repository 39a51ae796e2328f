import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { ForegroundGate, MAX_PAUSE_MS, RECENT_REQUEST_MS } from '../../src/lib/foreground-gate.ts';
import { startTestApp } from '../support/harness.ts';

/** Turns of the event loop: long enough for anything already resolved to have run. */
async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise's state without waiting for it. */
function watch(p: Promise<void>): { settled: boolean } {
  const state = { settled: false };
  void p.then(() => {
    state.settled = true;
  });
  return state;
}

const HOUR = 3_600_000;

describe('ForegroundGate', () => {
  test('background work goes at once when no request runs', async () => {
    const quiet = watch(new ForegroundGate().quiet(HOUR));
    await turns();
    assert.equal(quiet.settled, true);
  });

  test('background work waits until every running request has ended; a second end counts once', async () => {
    const gate = new ForegroundGate();
    const first = gate.enter();
    const second = gate.enter();
    const quiet = watch(gate.quiet(HOUR));
    first();
    first();
    await turns();
    assert.equal(quiet.settled, false, 'one request still runs');
    assert.equal(gate.running, 1);
    second();
    await turns();
    assert.equal(quiet.settled, true);
  });

  /** A gate on a clock the test sets, recording the pauses it asks for (each resolved at once). */
  const pacedGate = () => {
    const clock = { now: 0 };
    const pauses: number[] = [];
    const gate = new ForegroundGate({
      now: () => clock.now,
      sleep: async (ms) => {
        pauses.push(ms);
      },
    });
    return { gate, clock, pauses };
  };

  test('while requests keep coming, background work pauses after each step for as long as the step took', async () => {
    const { gate, clock, pauses } = pacedGate();
    await gate.quiet(HOUR); // the first step starts at 0
    clock.now = 10;
    gate.enter()(); // a read ended at 10
    clock.now = 30;
    await gate.quiet(HOUR); // the step took 30 ms: as long again for the reads
    clock.now = 38;
    await gate.quiet(HOUR); // 8 ms
    clock.now = 538;
    await gate.quiet(HOUR); // a long step is paid back at most MAX_PAUSE_MS
    assert.deepEqual(pauses, [30, 8, MAX_PAUSE_MS]);
  });

  test('with nobody reading, background work goes at full speed', async () => {
    const { gate, clock, pauses } = pacedGate();
    await gate.quiet(HOUR);
    clock.now = 40;
    await gate.quiet(HOUR); // no request ever
    gate.enter()(); // a read ends at 40
    clock.now = 40 + RECENT_REQUEST_MS;
    await gate.quiet(HOUR); // its last read ended a while ago
    assert.deepEqual(pauses, []);
  });

  test('background work is not starved: it goes after its longest wait even while a request runs', async () => {
    const gate = new ForegroundGate();
    gate.enter();
    // Resolves by its bound alone (the request never ends); a hang here is the failure.
    await gate.quiet(1);
    assert.equal(gate.running, 1);
  });
});

describe('API requests and the embedded database', () => {
  test('an API request holds background writes from its arrival until it is answered (embedded mode)', async () => {
    const t = await startTestApp('pglite');
    try {
      const gate = t.db.foreground;
      assert.ok(gate, 'embedded mode has a gate');
      const body = new PassThrough();
      const answer = t.app.inject({
        method: 'POST',
        url: '/api/connect/knowledgebase-items',
        headers: { authorization: `Bearer ${t.orgA.key}`, 'content-type': 'application/json' },
        payload: body,
      });
      for (let turn = 0; gate.running === 0; turn++) {
        assert.ok(turn < 100_000, 'the request never entered the gate');
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const quiet = watch(gate.quiet(HOUR));
      body.write('{"title":"Handbook",');
      await turns();
      assert.equal(quiet.settled, false, 'the upload is still arriving');
      body.end('"content":"Returns are accepted within 30 days."}');
      const res = await answer;
      assert.equal(res.statusCode, 200, res.body);
      await turns();
      assert.equal(quiet.settled, true);
      assert.equal(gate.running, 0);
    } finally {
      await t.close();
    }
  });
});
