/**
 * The listing pass every connector that walks a listing shares (src/connectors/toolkit/listing-pass.ts):
 * unchanged entries skipped, changed ones read, a run of failing reads ending the pass before any
 * deletion, checkpoints at the cadence, and deletions only after a listing that completed. The connectors'
 * own tests (wiki, storefront, support_desk) exercise it against their fakes; these pin its rules alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  deleteUnlisted,
  type ListedRecord,
  type ListingPassOptions,
  listingPass,
  type ReadOutcome,
} from '../../src/connectors/toolkit/listing-pass.ts';
import type { KnownDocument, SyncEvent } from '../../src/connectors/types.ts';

interface Entry {
  id: string;
  version: string;
}
type Cursor = { after: string };

const TABLE = 'things';
const held = (entries: Array<[string, string]>): Map<string, KnownDocument> =>
  new Map(entries.map(([id, version]) => [id, { externalId: id, table: TABLE, version }]));

async function* listOf(records: ListedRecord<Entry, Cursor>[]): AsyncGenerator<ListedRecord<Entry, Cursor>> {
  for (const r of records) yield r;
}
const item = (id: string, version: string): ListedRecord<Entry, Cursor> => ({
  kind: 'item',
  id,
  entry: { id, version },
});
const document = (e: Entry): SyncEvent<Cursor> => ({
  kind: 'document',
  doc: {
    externalId: e.id,
    title: e.id,
    url: `https://example.test/${e.id}`,
    markdown: e.id,
    visibility: 'public',
    tags: [],
    table: TABLE,
    version: e.version,
  },
});

function options(
  records: ListedRecord<Entry, Cursor>[],
  over: Partial<ListingPassOptions<Entry, Cursor>> = {},
): ListingPassOptions<Entry, Cursor> & { reads: string[][] } {
  const reads: string[][] = [];
  return {
    signal: new AbortController().signal,
    known: held([]),
    list: () => listOf(records),
    token: (e) => e.version,
    read: (batch): ReadOutcome<Cursor> => {
      reads.push(batch.map((e) => e.id));
      return { events: batch.map(document) };
    },
    failures: { max: 3, source: 'Example', what: 'document requests' },
    reads,
    ...over,
  };
}

async function drain(opts: ListingPassOptions<Entry, Cursor>) {
  const events: SyncEvent<Cursor>[] = [];
  const gen = listingPass(opts);
  for (;;) {
    const step = await gen.next();
    if (step.done) return { events, summary: step.value };
    events.push(step.value);
  }
}

const kinds = (events: SyncEvent<Cursor>[]) =>
  events.map((e) =>
    e.kind === 'document'
      ? `doc ${e.doc.externalId}`
      : e.kind === 'deleted'
        ? `deleted ${e.externalId}`
        : e.kind === 'checkpoint'
          ? `checkpoint ${e.cursor.after}`
          : `failure ${e.externalId ?? '?'}`,
  );

describe('listingPass', () => {
  it('skips entries whose token equals the held version and reads the new and changed ones', async () => {
    const opts = options([item('a', '1'), item('b', '2'), item('c', '1')], {
      known: held([
        ['a', '1'],
        ['b', '1'],
      ]),
    });
    const { events } = await drain(opts);
    assert.deepEqual(opts.reads, [['b'], ['c']]);
    assert.deepEqual(kinds(events), ['doc b', 'doc c']);
  });

  it('a full pass (nothing held) reads every entry from where it resumes and deletes nothing', async () => {
    const opts = options([item('a', '1'), item('b', '1'), item('c', '1')], {
      known: undefined,
      resumeAt: (entries) => entries.findIndex((e) => e.id === 'b'),
    });
    const { events } = await drain(opts);
    assert.deepEqual(opts.reads, [['b'], ['c']]);
    assert.deepEqual(kinds(events), ['doc b', 'doc c']);
  });

  it('reads in batches, several in flight, and yields in listing order', async () => {
    const records = ['a', 'b', 'c', 'd', 'e'].map((id) => item(id, '1'));
    let inFlight = 0;
    let most = 0;
    const opts = options(records, {
      batchSize: 2,
      concurrency: 2,
      read: async (batch) => {
        inFlight++;
        most = Math.max(most, inFlight);
        // The first batch answers last: order must not follow completion.
        await new Promise((resolve) => setImmediate(resolve));
        if (batch[0]!.id === 'a') await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return { events: batch.map(document) };
      },
    });
    const { events } = await drain(opts);
    assert.deepEqual(kinds(events), ['doc a', 'doc b', 'doc c', 'doc d', 'doc e']);
    assert.equal(most, 2);
  });

  it('failures in a row stop the pass with an error naming them, before any deletion', async () => {
    const records = ['a', 'b', 'c', 'd', 'e'].map((id) => item(id, '2'));
    const events: SyncEvent<Cursor>[] = [];
    const opts = options(records, {
      // `gone` is held and not listed: a deletion, had the pass completed.
      known: held([['gone', '1']]),
      read: ([e]) => {
        const error = new Error(`${e!.id}: 503 Service Unavailable`);
        return {
          events: [{ kind: 'failure', externalId: e!.id, table: TABLE, error, retryable: true }],
          transient: error,
        };
      },
    });
    await assert.rejects(
      async () => {
        for await (const event of listingPass(opts)) events.push(event);
      },
      { message: 'Example failed 3 document requests in a row; last: c: 503 Service Unavailable' },
    );
    assert.deepEqual(kinds(events), ['failure a', 'failure b', 'failure c']);
  });

  it('a read that succeeds ends the run; one failed for good too, unless the options say it does not', async () => {
    const pattern: Array<'transient' | 'ok' | 'permanent'> = ['transient', 'transient', 'ok', 'transient'];
    const records = pattern.map((_, i) => item(String(i), '1'));
    const readAs =
      (kinds: typeof pattern) =>
      (batch: readonly Entry[]): ReadOutcome<Cursor> => {
        const how = kinds[Number(batch[0]!.id)]!;
        const error = new Error(how);
        return how === 'ok'
          ? { events: [] }
          : how === 'transient'
            ? { events: [], transient: error }
            : { events: [], failed: true };
      };
    await drain(options(records, { read: readAs(pattern) }));
    const permanent: typeof pattern = ['transient', 'transient', 'permanent', 'transient'];
    await drain(options(records, { read: readAs(permanent) }));
    await assert.rejects(
      drain(
        options(records, {
          read: readAs(permanent),
          failures: { max: 3, source: 'Example', what: 'batches', permanentFailureResets: false },
        }),
      ),
      /Example failed 3 batches in a row; last: transient/,
    );
  });

  it('checkpoints every so many entries read, at the last one', async () => {
    const records = ['a', 'b', 'c', 'd', 'e'].map((id) => item(id, '1'));
    const opts = options(records, { checkpoint: { every: 2, cursor: (e) => ({ after: e.id }) } });
    const { events } = await drain(opts);
    assert.deepEqual(kinds(events), [
      'doc a',
      'doc b',
      'checkpoint b',
      'doc c',
      'doc d',
      'checkpoint d',
      'doc e',
    ]);
  });

  it('after a complete listing, held documents it did not show as items leave; settled ones and unreadable ones with an id stay', async () => {
    const unreadable: ListedRecord<Entry, Cursor> = {
      kind: 'unreadable',
      id: 'odd',
      events: [
        { kind: 'failure', externalId: 'odd', table: TABLE, error: new Error('odd shape'), retryable: false },
      ],
    };
    const opts = options(
      [item('a', '1'), { kind: 'not_item', id: 'draft' }, unreadable, item('unpublished-since', '2')],
      {
        known: held([
          ['a', '1'],
          ['draft', '1'],
          ['odd', '1'],
          ['gone', '1'],
          ['failed', '1'],
          ['unpublished-since', '1'],
        ]),
        settled: (id) => id === 'failed',
        yieldedEarlier: () => [{ id: 'new-then-archived', table: TABLE }],
        read: (batch) => ({ events: [], left: batch.map((e) => e.id) }),
      },
    );
    const { events, summary } = await drain(opts);
    assert.deepEqual(kinds(events), [
      'failure odd',
      'deleted draft',
      'deleted gone',
      'deleted unpublished-since',
      'deleted new-then-archived',
    ]);
    assert.equal(summary.complete, true);
    assert.deepEqual([...summary.listed].sort(), ['a', 'draft', 'odd', 'unpublished-since']);
  });

  it('a listed record without an id makes the listing incomplete: nothing is deleted', async () => {
    const opts = options([item('a', '1'), { kind: 'unreadable', id: undefined, events: [] }], {
      known: held([
        ['a', '1'],
        ['gone', '1'],
      ]),
    });
    const { events, summary } = await drain(opts);
    assert.deepEqual(kinds(events), []);
    assert.equal(summary.complete, false);
  });

  it('a listing that throws midway deletes nothing', async () => {
    const opts = options([], {
      known: held([['gone', '1']]),
      list: async function* () {
        yield item('a', '2');
        throw new Error('page 2: 500');
      },
      readWhen: 'as_listed',
    });
    const events: SyncEvent<Cursor>[] = [];
    await assert.rejects(async () => {
      for await (const event of listingPass(opts)) events.push(event);
    }, /page 2: 500/);
    assert.deepEqual(kinds(events), ['doc a']);
  });

  it('as_listed reads each changed record as it is listed; records that are no items are read too', async () => {
    const opts = options(
      [item('a', '1'), { kind: 'not_item', id: 'b', entry: { id: 'b', version: 'draft' } }],
      {
        known: held([['a', '1']]),
        readWhen: 'as_listed',
      },
    );
    await drain(opts);
    assert.deepEqual(opts.reads, [['b']]);
  });

  it('deleteUnlisted yields each id once, with its held table, and says so to onDeleted', () => {
    const told: string[] = [];
    const events = [
      ...deleteUnlisted<Cursor>({
        signal: new AbortController().signal,
        known: new Map([['x', { externalId: 'x', table: 'other', version: null }]]),
        present: new Set(),
        yieldedEarlier: [
          { id: 'x', table: 'other' },
          { id: 'y', table: TABLE },
        ],
        onDeleted: (id) => told.push(id),
      }),
    ];
    assert.deepEqual(events, [
      { kind: 'deleted', externalId: 'x', table: 'other' },
      { kind: 'deleted', externalId: 'y', table: TABLE },
    ]);
    assert.deepEqual(told, ['x', 'y']);
  });
});
