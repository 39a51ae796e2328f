import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { createSourceHttpClient } from '../../src/connectors/http.ts';
import {
  type OffsetPagination,
  type Page,
  PaginationError,
  paginateCursor,
  paginateLinkHeader,
  paginateNextUrl,
  paginateOffset,
} from '../../src/connectors/toolkit/pagination.ts';
import {
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  startFakeServer,
} from '../fakes/fake-server.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp } from './helpers.ts';

/** Record ids `r0`…`r<n-1>`. */
const records = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}` }));
const ids = (pages: Page<{ results: { id: string }[] }, unknown>[]) =>
  pages.flatMap((p) => p.data.results.map((r) => r.id));

function context(signal = new AbortController().signal) {
  return { http: createSourceHttpClient({ fetch: plainFetch, ...fastHttp(), signal }), signal };
}

async function collect<P>(pages: AsyncIterable<P>): Promise<P[]> {
  const out: P[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

async function paginationError(pages: AsyncIterable<unknown>): Promise<PaginationError> {
  try {
    for await (const _ of pages);
  } catch (err) {
    assert.ok(err instanceof PaginationError, `expected a PaginationError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the pass to be refused');
}

// One fake source per test: `route` answers every request; requests are recorded.
let fake: FakeServer;
let route: (req: RecordedRequest) => FakeReply;
before(async () => {
  fake = await startFakeServer((req) => route(req));
});
after(() => fake.close());
function serve(handler: (req: RecordedRequest) => FakeReply): RecordedRequest[] {
  route = handler;
  fake.requests.length = 0;
  return fake.requests;
}

const notionPage = z.object({
  results: z.array(z.object({ id: z.string() })),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});
const notionCursor = {
  param: 'start_cursor',
  next: (p: z.infer<typeof notionPage>) => p.next_cursor,
  hasMore: (p: z.infer<typeof notionPage>) => p.has_more,
};

/** A Notion block-children listing against the fake (extra options such as `resume` added). */
function notionChildren(extra: { resume?: string } = {}) {
  return {
    request: { url: `${fake.url}/v1/blocks/b1/children` },
    schema: notionPage,
    items: (p: z.infer<typeof notionPage>) => p.results,
    cursor: notionCursor,
    ...extra,
  };
}

/** Notion's list envelope over `data`, `size` records a page; cursor `c<offset>`. */
function notionList(data: { id: string }[], size: number, cursor: string | undefined | null) {
  const start = cursor ? Number(cursor.slice(1)) : 0;
  const end = start + size;
  const hasMore = end < data.length;
  return { results: data.slice(start, end), has_more: hasMore, next_cursor: hasMore ? `c${end}` : null };
}

describe('paginateCursor', () => {
  it('Notion search (POST): the cursor goes in the JSON body, next to the caller’s fields', async () => {
    const data = records(5);
    const requests = serve((req) => {
      const body = JSON.parse(req.body) as { start_cursor?: string; page_size: number };
      return { status: 200, body: notionList(data, body.page_size, body.start_cursor) };
    });
    const pages = await collect(
      paginateCursor(context(), {
        request: { url: `${fake.url}/v1/search`, method: 'POST', json: { page_size: 2, query: '' } },
        schema: notionPage,
        items: (p) => p.results,
        cursor: notionCursor,
      }),
    );
    assert.deepEqual(ids(pages), ['r0', 'r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(
      pages.map((p) => p.next),
      ['c2', 'c4', null],
    );
    assert.deepEqual(
      requests.map((r) => JSON.parse(r.body)),
      [
        { page_size: 2, query: '' },
        { page_size: 2, query: '', start_cursor: 'c2' },
        { page_size: 2, query: '', start_cursor: 'c4' },
      ],
    );
  });

  it('Notion block children (GET): the cursor goes in the query; a last full page with has_more=false ends', async () => {
    const data = records(4);
    const requests = serve((req) => ({
      status: 200,
      body: notionList(data, Number(req.query.get('page_size')), req.query.get('start_cursor')),
    }));
    const pages = await collect(
      paginateCursor(context(), {
        request: { url: `${fake.url}/v1/blocks/b1/children`, query: { page_size: 2 } },
        schema: notionPage,
        items: (p) => p.results,
        cursor: notionCursor,
      }),
    );
    assert.deepEqual(ids(pages), ['r0', 'r1', 'r2', 'r3']);
    assert.deepEqual(
      requests.map((r) => r.query.toString()),
      ['page_size=2', 'page_size=2&start_cursor=c2'],
    );
  });

  it('a last full page that still says has_more is followed by one empty page, which ends the pass', async () => {
    const requests = serve((req) => {
      const cursor = req.query.get('start_cursor');
      if (!cursor) return { status: 200, body: { results: records(2), has_more: true, next_cursor: 'c2' } };
      return { status: 200, body: { results: [], has_more: false, next_cursor: null } };
    });
    const pages = await collect(paginateCursor(context(), notionChildren()));
    assert.deepEqual(
      pages.map((p) => [p.data.results.length, p.next]),
      [
        [2, 'c2'],
        [0, null],
      ],
    );
    assert.equal(requests.length, 2);
  });

  it('Shopify GraphQL: the cursor is the `after` variable; pageInfo ends the pass', async () => {
    const data = records(3);
    const requests = serve((req) => {
      const { variables } = JSON.parse(req.body) as { variables: { first: number; after?: string } };
      const start = variables.after ? Number(variables.after.slice(1)) : 0;
      const end = Math.min(start + variables.first, data.length);
      return {
        status: 200,
        body: {
          data: {
            products: {
              nodes: data.slice(start, end),
              pageInfo: { hasNextPage: end < data.length, endCursor: `c${end}` },
            },
          },
        },
      };
    });
    const schema = z.object({
      data: z.object({
        products: z.object({
          nodes: z.array(z.object({ id: z.string() })),
          pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
        }),
      }),
    });
    const query =
      'query Products($first: Int!, $after: String) { products(first: $first, after: $after) { … } }';
    const pages = await collect(
      paginateCursor(context(), {
        request: {
          url: `${fake.url}/admin/api/2026-10/graphql.json`,
          method: 'POST',
          json: { query, variables: { first: 2 } },
        },
        schema,
        items: (p) => p.data.products.nodes,
        cursor: {
          param: 'after',
          in: 'variables',
          next: (p) => p.data.products.pageInfo.endCursor,
          hasMore: (p) => p.data.products.pageInfo.hasNextPage,
        },
      }),
    );
    assert.deepEqual(
      pages.flatMap((p) => p.data.data.products.nodes.map((n) => n.id)),
      ['r0', 'r1', 'r2'],
    );
    assert.deepEqual(
      requests.map((r) => JSON.parse(r.body).variables),
      [{ first: 2 }, { first: 2, after: 'c2' }],
    );
    assert.equal(JSON.parse(requests[1]!.body).query, query);
  });

  it('Zendesk cursor pagination: `page[after]` from meta.after_cursor, until meta.has_more is false', async () => {
    const data = records(3);
    const requests = serve((req) => {
      const after = req.query.get('page[after]');
      const start = after ? Number(after.slice(1)) : 0;
      const end = Math.min(start + Number(req.query.get('page[size]')), data.length);
      const more = end < data.length;
      return {
        status: 200,
        body: {
          articles: data.slice(start, end),
          meta: { has_more: more, after_cursor: more ? `c${end}` : null, before_cursor: null },
          links: { next: null, prev: null },
        },
      };
    });
    const schema = z.object({
      articles: z.array(z.object({ id: z.string() })),
      meta: z.object({ has_more: z.boolean(), after_cursor: z.string().nullable() }),
    });
    const pages = await collect(
      paginateCursor(context(), {
        request: { url: `${fake.url}/api/v2/help_center/articles.json`, query: { 'page[size]': 2 } },
        schema,
        items: (p) => p.articles,
        cursor: { param: 'page[after]', next: (p) => p.meta.after_cursor, hasMore: (p) => p.meta.has_more },
      }),
    );
    assert.equal(pages.flatMap((p) => p.data.articles).length, 3);
    assert.deepEqual(
      requests.map((r) => r.query.get('page[after]')),
      [null, 'c2'],
    );
  });

  it('resumes from a saved cursor', async () => {
    const data = records(4);
    const requests = serve((req) => ({
      status: 200,
      body: notionList(data, 2, req.query.get('start_cursor')),
    }));
    const pages = await collect(paginateCursor(context(), notionChildren({ resume: 'c2' })));
    assert.deepEqual(ids(pages), ['r2', 'r3']);
    assert.equal(requests[0]!.query.get('start_cursor'), 'c2');
  });

  it('refuses a cursor the source already gave, without requesting it again', async () => {
    // A → B → A: a cycle, not merely the same cursor twice in a row.
    const next: Record<string, string> = { '': 'A', A: 'B', B: 'A' };
    const requests = serve((req) => {
      const cursor = req.query.get('start_cursor') ?? '';
      return {
        status: 200,
        body: { results: [{ id: `after-${cursor}` }], has_more: true, next_cursor: next[cursor] },
      };
    });
    const err = await paginationError(paginateCursor(context(), notionChildren()));
    assert.equal(err.fault, 'repeated');
    assert.equal(err.kind, 'invalid_response');
    assert.equal(err.page, 3);
    assert.match(
      err.message,
      /^GET http:\/\/127\.0\.0\.1:\d+\/v1\/blocks\/b1\/children \(page 3\) named a cursor this pass had already followed/,
    );
    assert.equal(requests.length, 3);
  });

  it('refuses a page that says more follow but names no cursor', async () => {
    serve(() => ({ status: 200, body: { results: [{ id: 'x' }], has_more: true, next_cursor: null } }));
    const err = await paginationError(
      paginateCursor(context(), {
        request: { url: `${fake.url}/v1/search`, method: 'POST' },
        schema: notionPage,
        items: (p) => p.results,
        cursor: notionCursor,
      }),
    );
    assert.equal(err.fault, 'no_continuation');
  });

  it('follows a few empty pages that still say has_more (filtered results), then refuses an endless run', async () => {
    // Three empty pages, then the records: followed.
    serve((req) => {
      const n = Number(req.query.get('start_cursor')?.slice(1) ?? 0);
      if (n < 3) return { status: 200, body: { results: [], has_more: true, next_cursor: `c${n + 1}` } };
      return { status: 200, body: { results: records(1), has_more: false, next_cursor: null } };
    });
    const spec = notionChildren();
    assert.deepEqual(ids(await collect(paginateCursor(context(), spec))), ['r0']);

    // Fresh cursors, never a record: refused after maxEmptyPages.
    const requests = serve((req) => {
      const n = Number(req.query.get('start_cursor')?.slice(1) ?? 0);
      return { status: 200, body: { results: [], has_more: true, next_cursor: `c${n + 1}` } };
    });
    const err = await paginationError(paginateCursor(context(), spec));
    assert.equal(err.fault, 'empty_pages');
    assert.equal(requests.length, 4);
  });

  it('refuses a source that ignores the cursor (the same records under ever new cursors)', async () => {
    let n = 0;
    serve(() => ({
      status: 200,
      body: { results: records(2), has_more: true, next_cursor: `fresh-${++n}` },
    }));
    const err = await paginationError(paginateCursor(context(), notionChildren()));
    assert.equal(err.fault, 'same_page');
    assert.equal(err.page, 2);
  });

  it('stops when the signal fires between pages, with its reason and no further request', async () => {
    const data = records(6);
    const requests = serve((req) => ({
      status: 200,
      body: notionList(data, 2, req.query.get('start_cursor')),
    }));
    const controller = new AbortController();
    const pages = paginateCursor(context(controller.signal), notionChildren());
    await assert.rejects(
      (async () => {
        for await (const _ of pages) controller.abort(new Error('job cancelled'));
      })(),
      /job cancelled/,
    );
    assert.equal(requests.length, 1);
  });

  it('a page that is not the expected shape is an invalid_response naming the request', async () => {
    serve(() => ({ status: 200, body: { results: 'nope' } }));
    await assert.rejects(
      collect(
        paginateCursor(context(), {
          request: { url: `${fake.url}/v1/search`, method: 'POST' },
          schema: notionPage,
          items: (p) => p.results,
          cursor: notionCursor,
        }),
      ),
      { name: 'SourceHttpError', kind: 'invalid_response' },
    );
  });
});

const resultsPage = z.object({ results: z.array(z.object({ id: z.string() })) });

describe('paginateLinkHeader', () => {
  /** Confluence v2: `size` records a page, `Link: </wiki/api/v2/pages?cursor=…>; rel="next"` while more follow. */
  function confluence(data: { id: string }[], size: number, opts: { emptyLastPage?: boolean } = {}) {
    return serve((req) => {
      const start = Number(req.query.get('cursor') ?? 0);
      const end = start + size;
      const more = opts.emptyLastPage ? start < data.length : end < data.length;
      const headers: Record<string, string> = more
        ? {
            link: `</wiki/api/v2/pages?cursor=${end}&limit=${size}>; rel="next", <${fake.url}/wiki>; rel="base"`,
          }
        : { link: `<${fake.url}/wiki>; rel="base"` };
      return { status: 200, headers, body: { results: data.slice(start, end) } };
    });
  }

  it('follows rel="next" (relative to the page) until a page has none', async () => {
    const requests = confluence(records(5), 2);
    const pages = await collect(
      paginateLinkHeader(context(), {
        request: { url: `${fake.url}/wiki/api/v2/pages`, query: { limit: 2 } },
        schema: resultsPage,
        items: (p) => p.results,
      }),
    );
    assert.deepEqual(ids(pages), ['r0', 'r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(
      requests.map((r) => `${r.path}?${r.query}`),
      [
        '/wiki/api/v2/pages?limit=2',
        '/wiki/api/v2/pages?cursor=2&limit=2',
        '/wiki/api/v2/pages?cursor=4&limit=2',
      ],
    );
    assert.equal(pages[0]!.next, `${fake.url}/wiki/api/v2/pages?cursor=2&limit=2`);
    assert.equal(pages.at(-1)!.next, null);
  });

  it('exact page-size boundary: the last full page links to an empty page without a link', async () => {
    const requests = confluence(records(4), 2, { emptyLastPage: true });
    const pages = await collect(
      paginateLinkHeader(context(), {
        request: { url: `${fake.url}/wiki/api/v2/pages`, query: { limit: 2 } },
        schema: resultsPage,
        items: (p) => p.results,
      }),
    );
    assert.deepEqual(
      pages.map((p) => p.data.results.length),
      [2, 2, 0],
    );
    assert.equal(requests.length, 3);
  });

  it('refuses a link back to a page already read', async () => {
    const requests = serve(() => ({
      status: 200,
      headers: { link: '</wiki/api/v2/pages?limit=2>; rel="next"' },
      body: { results: records(2) },
    }));
    const err = await paginationError(
      paginateLinkHeader(context(), {
        request: { url: `${fake.url}/wiki/api/v2/pages`, query: { limit: 2 } },
        schema: resultsPage,
        items: (p) => p.results,
      }),
    );
    assert.equal(err.fault, 'repeated');
    assert.equal(requests.length, 1);
  });

  it('reads the next link among several, with quoted commas and a relation list', async () => {
    const requests = serve((req) =>
      req.query.get('cursor') === '2'
        ? { status: 200, body: { results: records(1) } }
        : {
            status: 200,
            headers: {
              link: '</wiki/api/v2/pages?limit=2>; rel="prev"; title="a, b; c", </wiki/api/v2/pages?cursor=2>; rel="last next"',
            },
            body: { results: records(2) },
          },
    );
    const pages = await collect(
      paginateLinkHeader(context(), {
        request: { url: `${fake.url}/wiki/api/v2/pages` },
        schema: resultsPage,
        items: (p) => p.results,
      }),
    );
    assert.deepEqual(
      pages.map((p) => p.data.results.length),
      [2, 1],
    );
    assert.equal(requests[1]!.query.get('cursor'), '2');
  });

  it('refuses a Link header that does not parse instead of taking it for the last page', async () => {
    serve(() => ({ status: 200, headers: { link: 'garbage; rel=next' }, body: { results: records(2) } }));
    const err = await paginationError(
      paginateLinkHeader(context(), {
        request: { url: `${fake.url}/wiki/api/v2/pages` },
        schema: resultsPage,
        items: (p) => p.results,
      }),
    );
    assert.equal(err.fault, 'no_continuation');
    assert.match(err.message, /Link header that does not parse/);
  });

  it('never follows a link to another origin (the credentials would go along)', async () => {
    const requests = serve(() => ({
      status: 200,
      headers: { link: '<https://attacker.example/steal?cursor=2>; rel="next"' },
      body: { results: records(2) },
    }));
    const err = await paginationError(
      paginateLinkHeader(context(), {
        request: { url: `${fake.url}/wiki/api/v2/pages`, headers: { authorization: 'Basic c2VjcmV0' } },
        schema: resultsPage,
        items: (p) => p.results,
      }),
    );
    assert.equal(err.fault, 'foreign_url');
    assert.match(err.message, /another origin \(https:\/\/attacker\.example\/steal\)/);
    assert.equal(requests.length, 1);
  });
});

describe('paginateNextUrl', () => {
  it('Confluence `_links.next`: a site-relative URL joined to the base URL, path prefix kept', async () => {
    const data = records(3);
    const requests = serve((req) => {
      const start = Number(req.query.get('cursor') ?? 0);
      const end = start + 2;
      return {
        status: 200,
        body: {
          results: data.slice(start, end),
          _links: end < data.length ? { next: `/wiki/api/v2/pages?cursor=${end}&limit=2` } : {},
        },
      };
    });
    const base = `${fake.url}/acme`;
    const pages = await collect(
      paginateNextUrl(context(), {
        request: { url: `${base}/wiki/api/v2/pages`, query: { limit: 2 } },
        schema: resultsPage.extend({ _links: z.object({ next: z.string().optional() }) }),
        items: (p) => p.results,
        next: (p) => p._links.next,
        base,
      }),
    );
    assert.deepEqual(ids(pages), ['r0', 'r1', 'r2']);
    assert.deepEqual(
      requests.map((r) => r.path),
      ['/acme/wiki/api/v2/pages', '/acme/wiki/api/v2/pages'],
    );
  });

  const exportPage = z.object({
    articles: z.array(z.object({ id: z.string() })),
    next_page: z.string().nullable(),
    end_time: z.number(),
  });
  /** Zendesk's incremental article export: `next_page` carries a new start_time; the last page's is its own. */
  function incremental(times: number[]) {
    return serve((req) => {
      const start = Number(req.query.get('start_time'));
      const later = times.filter((t) => t > start);
      const end = later.at(0) ?? start;
      return {
        status: 200,
        body: {
          articles: later.slice(0, 1).map((t) => ({ id: `a${t}` })),
          next_page: `${fake.url}/api/v2/help_center/incremental/articles.json?start_time=${end}`,
          end_time: end,
        },
      };
    });
  }

  it('Zendesk incremental export: a next_page equal to the request ends the pass where onRepeat is "end"', async () => {
    const requests = incremental([100, 200]);
    const pages = await collect(
      paginateNextUrl(context(), {
        request: {
          url: `${fake.url}/api/v2/help_center/incremental/articles.json`,
          query: { start_time: 0 },
        },
        schema: exportPage,
        items: (p) => p.articles,
        next: (p) => p.next_page,
        onRepeat: 'end',
      }),
    );
    assert.deepEqual(
      pages.flatMap((p) => p.data.articles.map((a) => a.id)),
      ['a100', 'a200'],
    );
    assert.deepEqual(
      requests.map((r) => r.query.get('start_time')),
      ['0', '100', '200'],
    );
    assert.equal(pages.at(-1)!.next, null);
  });

  it('the same answer is refused where the source does not document it as the end', async () => {
    incremental([100]);
    const err = await paginationError(
      paginateNextUrl(context(), {
        request: { url: `${fake.url}/api/v2/help_center/incremental/articles.json?start_time=0` },
        schema: exportPage,
        items: (p) => p.articles,
        next: (p) => p.next_page,
      }),
    );
    assert.equal(err.fault, 'repeated');
    assert.equal(err.page, 2);
  });
});

const v1Page = z.object({
  results: z.array(z.object({ id: z.string() })),
  start: z.number(),
  limit: z.number(),
  size: z.number(),
  totalSize: z.number().optional(),
});

describe('paginateOffset', () => {
  /** Confluence v1 content list: `start`/`limit`, answering at most `cap` records a page. */
  function confluenceV1(
    data: { id: string }[],
    opts: { cap?: number; total?: boolean; ignoreStart?: boolean } = {},
  ) {
    return serve((req) => {
      const start = opts.ignoreStart ? 0 : Number(req.query.get('start'));
      const limit = Math.min(Number(req.query.get('limit')), opts.cap ?? Number.POSITIVE_INFINITY);
      const results = data.slice(start, start + limit);
      return {
        status: 200,
        body: {
          results,
          start,
          limit,
          size: results.length,
          ...(opts.total ? { totalSize: data.length } : {}),
        },
      };
    });
  }
  const spec = (limit: number, extra: Partial<OffsetPagination<z.infer<typeof v1Page>>['offset']> = {}) => ({
    request: { url: `${fake.url}/wiki/rest/api/content`, query: { type: 'page' } },
    schema: v1Page,
    items: (p: z.infer<typeof v1Page>) => p.results,
    offset: { param: 'start', limitParam: 'limit', limit, ...extra },
  });

  it('advances by the records received; a short page is the last', async () => {
    const requests = confluenceV1(records(5));
    const pages = await collect(paginateOffset(context(), spec(2)));
    assert.deepEqual(ids(pages), ['r0', 'r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(
      requests.map((r) => r.query.toString()),
      ['type=page&start=0&limit=2', 'type=page&start=2&limit=2', 'type=page&start=4&limit=2'],
    );
    assert.deepEqual(
      pages.map((p) => p.next),
      [2, 4, null],
    );
  });

  it('exact page-size boundary: a last full page is followed by one empty page, which ends the pass', async () => {
    const requests = confluenceV1(records(4));
    const pages = await collect(paginateOffset(context(), spec(2)));
    assert.deepEqual(
      pages.map((p) => p.data.size),
      [2, 2, 0],
    );
    assert.equal(requests.length, 3);
  });

  it('a total ends the pass without the extra request', async () => {
    const requests = confluenceV1(records(4), { total: true });
    const pages = await collect(paginateOffset(context(), spec(2, { total: (p) => p.totalSize })));
    assert.deepEqual(ids(pages), ['r0', 'r1', 'r2', 'r3']);
    assert.equal(requests.length, 2);
  });

  it('a source that serves fewer than asked is not taken to have ended, when it says its limit', async () => {
    confluenceV1(records(5), { cap: 2 });
    const pages = await collect(paginateOffset(context(), spec(50, { servedLimit: (p) => p.limit })));
    assert.deepEqual(ids(pages), ['r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('refuses a source that ignores the offset: by its own start, or by the same records again', async () => {
    confluenceV1(records(5), { ignoreStart: true });
    const byStart = await paginationError(
      paginateOffset(context(), spec(2, { servedOffset: (p) => p.start })),
    );
    assert.equal(byStart.fault, 'offset_ignored');
    assert.match(byStart.message, /answered start=0 when asked for start=2/);

    const bySamePage = await paginationError(paginateOffset(context(), spec(2)));
    assert.equal(bySamePage.fault, 'same_page');
  });

  it('sends start and limit in the JSON body of a POST, and resumes from a saved offset', async () => {
    const data = records(3);
    const requests = serve((req) => {
      const { start, limit } = JSON.parse(req.body) as { start: number; limit: number };
      const results = data.slice(start, start + limit);
      return { status: 200, body: { results, start, limit, size: results.length } };
    });
    const pages = await collect(
      paginateOffset(context(), {
        request: { url: `${fake.url}/search`, method: 'POST', json: { cql: 'type=page' } },
        schema: v1Page,
        items: (p) => p.results,
        offset: { param: 'start', limitParam: 'limit', limit: 2 },
        resume: 1,
      }),
    );
    assert.deepEqual(ids(pages), ['r1', 'r2']);
    assert.deepEqual(JSON.parse(requests[0]!.body), { cql: 'type=page', start: 1, limit: 2 });
  });
});
