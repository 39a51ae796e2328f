/**
 * The CLI's text for people: the progress line on a terminal (the bar) and off one (plain lines), the
 * choice between them, summaries and tables. The terminal path is tested through its formatting
 * function rather than a pseudo-terminal; the child-process tests cover the plain and JSON paths.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CrawlJob, ItemStats, SyncJob } from '../../src/client/index.ts';
import { crawlSummary, crawlView, indexingView } from '../../src/cli/crawl.ts';
import { clock, count, duration, eta, oneLine, rate, table } from '../../src/cli/format.ts';
import { formatItems, titleFor } from '../../src/cli/items.ts';
import { displayMode, formatProgress, intervalMs, type ProgressView } from '../../src/cli/progress.ts';
import { serviceUrl } from '../../src/cli/remote.ts';
import { formatHits } from '../../src/cli/search.ts';
import { formatStats } from '../../src/cli/stats.ts';
import { syncSummary, syncView } from '../../src/cli/sync.ts';

const stats: ItemStats = {
  total: 120,
  byIndexingStatus: { pending: 40, indexed: 78, failed: 2 },
  bySourceType: { integration: 100, crawl: 15, upload: 5 },
  byConnection: [
    {
      connectionId: 'c1',
      type: 'docs_space',
      total: 100,
      byIndexingStatus: { pending: 30, indexed: 70, failed: 0 },
    },
  ],
  chunks: 1234,
  indexer: { ratePerSecond: 25.3, queuedAhead: 40, etaSeconds: 2 },
};

const job: SyncJob = {
  jobId: 14,
  status: 'running',
  jobType: 'sync',
  startTime: 0,
  connectionId: 'c1',
  lastUpdatedAt: 0,
  duration: 12_300,
  bytesSynced: 0,
  rowsSynced: 100,
  trigger: 'api',
  attempts: 1,
  createdAt: 0,
  finishedAt: null,
  failureCount: 12,
  warnings: [],
  warningCount: 0,
  failures: Array.from({ length: 12 }, (_, i) => ({
    externalId: `d${i}`,
    table: 'docs_space_pages',
    message: `page ${i} cannot be read`,
    retryable: false,
  })),
  documents: { seen: 120, stored: 100, unchanged: 15, deleted: 2, failed: 12 },
};

describe('CLI text', () => {
  test('a terminal gets the bar, other streams plain lines, --json JSON lines', () => {
    assert.equal(displayMode({ json: false, isTTY: true }), 'tty');
    assert.equal(displayMode({ json: false, isTTY: false }), 'lines');
    assert.equal(displayMode({ json: true, isTTY: true }), 'json');
    assert.equal(intervalMs(undefined, 'tty'), 1000);
    assert.equal(intervalMs(undefined, 'lines'), 5000, 'a modest interval off a terminal');
    assert.equal(intervalMs(0.2, 'lines'), 200);
  });

  test('the progress line: documents, chunks, rate and ETA, with the bar on a terminal', () => {
    const view = syncView('sync docs_space (job 14)', job, stats);
    assert.deepEqual(
      [view.done, view.total, view.etaSeconds],
      [70, 100, 2],
      "the connection's items searchable",
    );
    assert.equal(
      formatProgress(view, { style: 'bar', bar: '████░░░░', elapsedMs: 12_000 }),
      'sync docs_space (job 14) running ████░░░░ 70/100 items searchable · 120 seen, 100 stored, 15 unchanged, 2 deleted, 12 failed · 1,234 chunks · 25.3 items/s · ETA 2 s · 0:12',
    );
    assert.equal(
      formatProgress(view, { style: 'line', elapsedMs: 72_000 }),
      '1:12 sync docs_space (job 14) running: 70/100 items searchable · 120 seen, 100 stored, 15 unchanged, 2 deleted, 12 failed · 1,234 chunks · 25.3 items/s · ETA 2 s',
    );
    const done: ProgressView = {
      label: 'reembed',
      done: 5,
      total: 5,
      unit: 'items',
      details: {},
      rate: null,
      etaSeconds: 0,
    };
    assert.equal(
      formatProgress(done, { style: 'line', elapsedMs: 0 }),
      '0:00 reembed: 5/5 items',
      'no ETA once done, no rate unknown',
    );
  });

  test('a crawl reading: pages of the admitted, outcomes, page rate and ETA', () => {
    const crawl = {
      id: 'j1',
      url: 'http://site.test/',
      status: 'scraping',
      completed_pages: 30,
      total_pages: 60,
      limit: 100,
      outcomes: { created: 28, failed: 2 },
      refused: { budget: { count: 12, sample: ['http://site.test/x'] } },
      error_message: null,
      created_at: '2026-01-01T00:00:00.000Z',
      completed_at: '2026-01-01T00:01:05.000Z',
    } as unknown as CrawlJob;
    const view = crawlView('crawl http://site.test/', crawl, stats, 3);
    assert.equal(
      formatProgress(view, { style: 'line', elapsedMs: 10_000 }),
      '0:10 crawl http://site.test/ scraping: 30/60 pages (limit 100) · 28 created, 2 failed · 1,234 chunks · 3.0 pages/s · ETA 10 s',
    );
    const summary = crawlSummary(
      'crawl http://site.test/',
      { ...crawl, status: 'completed', items_pending: 12 },
      stats,
    );
    assert.equal(
      summary,
      [
        'crawl http://site.test/ (job j1) completed in 1 min 05 s',
        '  pages      30 of limit 100',
        '  outcomes   28 created, 2 failed',
        '  not kept   budget: 12 (e.g. http://site.test/x)',
        '  indexing   12 pages not yet searchable (ETA 2 s); kb stats --wait follows them',
      ].join('\n'),
    );
    const searchable = crawlSummary(
      'crawl http://site.test/',
      { ...crawl, status: 'completed', items_pending: 0 },
      stats,
    );
    assert.equal(searchable.split('\n').at(-1), '  searchable every stored page');
    // Once the job has ended, --wait follows the indexing of its pages.
    const indexing = indexingView(
      'crawl http://site.test/',
      { ...crawl, status: 'completed', items_pending: 12 },
      stats,
    );
    assert.deepEqual([indexing.status, indexing.done, indexing.total], ['indexing', 18, 30]);
  });

  test('the sync summary: counts, duration, items searchable, the first failures', () => {
    const text = syncSummary(
      'sync docs_space (job 14)',
      { ...job, status: 'incomplete', error: '12 documents failed' },
      stats,
    );
    const lines = text.split('\n');
    assert.equal(lines[0], 'sync docs_space (job 14) incomplete in 12.3 s');
    assert.equal(lines[1], '  documents  120 seen, 100 stored, 15 unchanged, 2 deleted, 12 failed');
    assert.equal(
      lines[2],
      '  items      70/100 searchable, 30 pending (ETA 2 s), 0 failed to index; 1,234 chunks in the knowledge base',
    );
    assert.equal(lines[3], '  error      12 documents failed');
    assert.equal(lines[4], '  failures   d0 (docs_space_pages): page 0 cannot be read');
    assert.equal(lines.length, 4 + 10 + 1, 'ten failures and a line for the rest');
    assert.equal(lines.at(-1), '             ... and 2 more (--json lists up to 100)');
  });

  test('stats, hits and item tables read as columns', () => {
    assert.equal(
      formatStats(stats),
      [
        'items        120 (78 searchable, 40 pending, 2 failed)',
        'by source    100 synced, 15 crawled, 5 uploaded',
        'chunks       1,234',
        'indexer      25.3 items/s, 40 queued up to your last pending item, ETA 2 s',
        'connections',
        '  docs_space  c1  100 items  70 searchable, 30 pending, 0 failed',
      ].join('\n'),
    );
    const hit = {
      title: 'Walrus care',
      source_url: 'https://zoo.test/w',
      visibility: 'public',
      distance: 0.21234,
      chunk_index: 0,
      chunk_plain_text: 'Walruses need\ncold water.',
      source_type: 'upload',
      source_table_name: 'uploaded_documents',
      item_id: 'i1',
      tags: [],
    };
    assert.equal(
      formatHits([hit]),
      '1. 0.212  Walrus care  upload  https://zoo.test/w\n   Walruses need cold water.',
    );
    assert.equal(formatHits([]), 'no results');
    const item = {
      id: 'i1',
      title: 'Walrus care',
      visibility: 'public',
      source_type: 'upload',
      source_table_name: 'uploaded_documents',
      source_url: '',
      tags: [],
      indexing_status: 'indexed',
      created_at: '2026-01-02T03:04:05.000Z',
      updated_at: '2026-01-02T03:04:05.000Z',
    };
    const page = {
      current_page: 1,
      total_pages: 3,
      total_items: 41,
      items_per_page: 20,
      has_next_page: true,
      has_previous_page: false,
    };
    assert.equal(
      formatItems([item], page),
      'ID  STATUS   SOURCE  UPDATED           TITLE\ni1  indexed  upload  2026-01-02 03:04  Walrus care\npage 1 of 3, 41 items; --page 2 for more',
    );
  });

  test('numbers, durations, upload titles and the service URL', () => {
    assert.deepEqual(
      [count(1234567), rate(0.456), rate(25.34), rate(1234.5)],
      ['1,234,567', '0.46', '25.3', '1,235'],
    );
    assert.deepEqual(
      [duration(850), duration(12_340), duration(245_000), duration(7_380_000)],
      ['850 ms', '12.3 s', '4 min 05 s', '2 h 03 min'],
    );
    assert.deepEqual(
      [eta(7.2), eta(245), clock(7_000), clock(3_723_000)],
      ['8 s', '4 min 05 s', '0:07', '1:02:03'],
    );
    assert.equal(oneLine('a\n\n b   c', 4), 'a b…');
    assert.equal(
      table([
        ['a', 'bb', 'c'],
        ['ccc', 'd', 'e'],
      ]),
      'a    bb  c\nccc  d   e',
    );
    assert.equal(titleFor('/x/notes.md', 'intro\n\n## Sub\n# Real title #\n'), 'Real title');
    assert.equal(titleFor('/x/notes.md', 'no heading'), 'notes');
    assert.equal(serviceUrl(undefined, {}), 'http://127.0.0.1:8080');
    assert.equal(serviceUrl(undefined, { PORT: '9000' }), 'http://127.0.0.1:9000');
    assert.equal(
      serviceUrl(undefined, { KB_URL: 'https://kb.example.test/', PORT: '9000' }),
      'https://kb.example.test',
    );
    assert.equal(serviceUrl('http://h:1/base/', { KB_URL: 'https://other' }), 'http://h:1/base');
    assert.throws(() => serviceUrl('ftp://h', {}), /must be http or https/);
  });
});
