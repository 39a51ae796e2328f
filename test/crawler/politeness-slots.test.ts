/**
 * The host gate's shared stage (src/crawler/host-slots.ts over crawl_hosts) without worker processes: two
 * instances over two connection pools of one Postgres database stand for two processes. The runtime uses
 * it over Postgres only: the embedded service (PGlite) is one process and keeps the in-process gate alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { HostGate } from '../../src/crawler/fetch-page.ts';
import { DatabaseHostSlots } from '../../src/crawler/host-slots.ts';
import { createCrawlerRuntime } from '../../src/crawler/runtime.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { releaseHostSlot, tryTakeHostSlot } from '../../src/db/repositories/crawl-hosts.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { freshDatabase } from '../support/harness.ts';

describe('shared host slots (postgres)', () => {
  let db: Database;
  let other: Database;
  let drop: () => Promise<void>;

  before(async () => {
    const fresh = await freshDatabase('postgres');
    db = fresh.db;
    drop = fresh.drop;
    await migrate(db);
    other = await openPostgres(fresh.url!, { max: 3 });
  });
  after(async () => {
    await other?.close();
    await drop?.();
  });

  /** Two "processes": a gate each, over its own pool, with the same limits. */
  function twoGates(limits: { concurrency: number; minDelayMs: number }): [HostGate, HostGate] {
    return [db, other].map(
      (q) => new HostGate({ ...limits, shared: new DatabaseHostSlots(q, { leaseMs: 10_000 }) }),
    ) as [HostGate, HostGate];
  }

  async function leases(host: string): Promise<number> {
    const [row] = await db.query<{ n: number }>(
      'SELECT (SELECT count(*) FROM jsonb_object_keys(leases))::int AS n FROM crawl_hosts WHERE host = $1',
      [host],
    );
    return row?.n ?? 0;
  }

  /** Waits (a hang guard of 30 s, not a deadline) until `check` holds: a statement sent without awaiting. */
  async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
    for (const start = performance.now(); !(await check()); ) {
      assert.ok(performance.now() - start < 30_000, `still not: ${what}`);
      await sleep(5);
    }
  }

  it('holds the concurrency across gates, and gives every slot back', async () => {
    const gates = twoGates({ concurrency: 2, minDelayMs: 0 });
    let active = 0;
    let peak = 0;
    const task = (gate: HostGate) =>
      gate.run('c.example', async () => {
        peak = Math.max(peak, ++active);
        await sleep(15);
        active--;
      });
    // Each gate alone would let 2 through: 4 at once without the shared stage.
    await Promise.all(Array.from({ length: 12 }, (_, i) => task(gates[i % 2]!)));
    assert.equal(peak, 2);
    // A release's statement runs after the task's end.
    await eventually(async () => (await leases('c.example')) === 0, 'every slot given back');
  });

  it('spaces starts across gates, applies a Crawl-delay and a pause set through the other gate', async () => {
    const [a, b] = twoGates({ concurrency: 4, minDelayMs: 100 });
    const starts: number[] = [];
    const task = (gate: HostGate) => gate.run('d.example', async () => void starts.push(performance.now()));
    await Promise.all([task(a), task(b), task(a), task(b)]);
    starts.sort((x, y) => x - y);
    // The allowance of fetch-page.test.ts (a task runs a moment after its grant), and the database's reply.
    for (let i = 1; i < starts.length; i++)
      assert.ok(starts[i]! - starts[i - 1]! >= 50, `${starts.join(', ')}`);

    // A Crawl-delay one gate learnt binds the other: one at a time, and at least the delay apart.
    await a.setCrawlDelay('e.example', 200);
    let active = 0;
    let peak = 0;
    const slow: number[] = [];
    const slowTask = () =>
      b.run('e.example', async () => {
        slow.push(performance.now());
        peak = Math.max(peak, ++active);
        await sleep(5);
        active--;
      });
    await Promise.all([slowTask(), slowTask(), slowTask()]);
    assert.equal(peak, 1);
    assert.ok(slow[2]! - slow[0]! >= 300, `${slow[2]! - slow[0]!} ms for two delays of 200`);

    // A 429's pause through one gate holds the other back.
    // Long enough that the pause's own statement, however slow a loaded machine makes it, leaves most of it.
    a.pause('f.example', 2_000);
    const paused = async () => {
      const [row] = await db.query<{ paused: boolean }>(
        'SELECT paused_until > now() AS paused FROM crawl_hosts WHERE host = $1',
        ['f.example'],
      );
      return row?.paused === true;
    };
    await eventually(paused, "the pause's statement");
    const t0 = performance.now();
    await b.run('f.example', async () => {});
    assert.ok(performance.now() - t0 >= 500, `${performance.now() - t0} ms`);
  });

  it('spaces the grants by the delay on the database clock, whoever asks', async () => {
    // Four askers over two pools, each taking a slot 6 times; the grant times are the database's own
    // (one clock), so the spacing is exact: no allowance for a late-running task.
    const started: number[] = [];
    const asker = async (q: Database, id: string) => {
      for (let i = 0; i < 6; i++) {
        const token = `${id}:${i}`;
        for (;;) {
          const r = { host: 'h.example', token, holder: id, concurrency: 2, minDelayMs: 30, leaseMs: 10_000 };
          const answer = await tryTakeHostSlot(q, r);
          if (answer.granted) {
            started.push(answer.startedAtMs);
            break;
          }
          await sleep(Math.max(1, answer.startInMs));
        }
        await releaseHostSlot(q, 'h.example', token);
      }
    };
    await Promise.all([asker(db, 'a'), asker(db, 'b'), asker(other, 'c'), asker(other, 'd')]);
    started.sort((x, y) => x - y);
    assert.equal(started.length, 24);
    for (let i = 1; i < started.length; i++)
      assert.ok(started[i]! - started[i - 1]! >= 30, `grants ${started[i - 1]} and ${started[i]}`);
  });

  it('keeps the next free slot for a process that found them all taken', async () => {
    // One gate has a stream of requests for the host's only slot; without a turn kept for the other, the
    // one that gives the slot back and asks again at once takes it every time, and the other waits it out.
    const [a, b] = twoGates({ concurrency: 1, minDelayMs: 0 });
    const order: string[] = [];
    const task = (gate: HostGate, name: string) =>
      gate.run('q.example', async () => {
        order.push(name);
        await sleep(15);
      });
    const stream = Promise.all(Array.from({ length: 20 }, (_, i) => task(a, `a${i}`)));
    await sleep(30);
    await Promise.all([stream, task(b, 'b')]);
    // b asks while about the third of a's requests runs: the slot is its turn after that one, or soon.
    assert.ok(order.indexOf('b') <= 6, order.join(' '));
  });

  it('renews a held slot past its lease while its process lives', async () => {
    const slots = new DatabaseHostSlots(db, { leaseMs: 300 });
    const release = await slots.acquire('r.example', { concurrency: 1, delayMs: 0 });
    await sleep(900); // three leases
    const probe = {
      host: 'r.example',
      token: 'probe',
      holder: 'probe',
      concurrency: 1,
      minDelayMs: 0,
      leaseMs: 300,
    };
    assert.equal((await tryTakeHostSlot(db, probe)).granted, false, 'the slot is still held');
    await release();
    assert.equal(await leases('r.example'), 0);
  });

  it('stops waiting when the signal aborts, leaving no slot behind', async () => {
    const [a, b] = twoGates({ concurrency: 1, minDelayMs: 0 });
    const release = await a.acquire('g.example');
    const controller = new AbortController();
    const waiting = b.acquire('g.example', controller.signal);
    await sleep(40);
    controller.abort(new Error('cancelled'));
    await assert.rejects(waiting, /cancelled/);
    // The gate's release sends its statement without waiting for it.
    release();
    await eventually(async () => (await leases('g.example')) === 0, 'the held slot given back');
    const again = await b.acquire('g.example');
    again();
  });

  it('is what the runtime uses over Postgres, unless told to keep to the process', async () => {
    const rt = createCrawlerRuntime({ allowPrivate: true, db });
    const own = createCrawlerRuntime({ allowPrivate: true, db, overrides: { hostSlots: 'process' } });
    await rt.extractor.close();
    await own.extractor.close();
    assert.equal(rt.gate.shared, true);
    assert.equal(own.gate.shared, false);
  });
});

describe('embedded (pglite)', () => {
  it('keeps the in-process gate alone: one process, nothing to share', async () => {
    // The runtime decides by the database's kind alone (createCrawlerRuntime); opening a PGlite, seconds
    // on this machine, to read its kind would add nothing. Crawls over PGlite run in test/http/crawl*.
    const pglite = { kind: 'pglite' } as Database;
    const rt = createCrawlerRuntime({ allowPrivate: true, db: pglite });
    await rt.extractor.close();
    assert.equal(rt.gate.shared, false);
  });
});
