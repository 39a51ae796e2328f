/**
 * The Notion API calls of the content sync: paths, headers, pagination (vendor-apis/notion.md 3-4).
 * Every list is paginated with `start_cursor` / `page_size` (100, the maximum): in the query string for
 * GET, in the JSON body for POST. Retries (429 with `Retry-After`, 5xx) are `ctx.http`'s.
 *
 * 401 and 403 mean the token no longer reads the workspace: they become one `source_auth_failed` error
 * naming the source, whichever call met them.
 *
 * One data-source query (its filter and sort) reaches at most 10,000 results; at the cap pagination just
 * ends (`has_more: false`) and only `request_status: {type: "incomplete"}` on the pages says the result was
 * cut. So rows are read in `created_time` windows, oldest first: a capped window is followed by a fresh
 * query from the last `created_time` it reached, until a window is complete (Notion's own recipe, "Query
 * large data sources"). `created_time` never changes, so an edit during the pass cannot move a row out of
 * the windows, as it could with `last_edited_time`.
 */
import { z } from 'zod';
import { joinUrl, pathSegment } from '../base-url.ts';
import { sourceRefusal } from '../credential-check.ts';
import { isSourceHttpError } from '../http.ts';
import { type PaginationContext, paginateCursor } from '../toolkit/pagination.ts';
import type { ConnectorContext, SourceHttpClient } from '../types.ts';
import {
  type NotionBlock,
  type NotionDatabase,
  type NotionPage,
  blockSchema,
  databaseSchema,
  listSchema,
  type NotionList,
  pageSchema,
} from './schemas.ts';

const PAGE_SIZE = 100;
const SOURCE = { label: 'Notion', type: 'notes' } as const;

/** One page of a list: its raw results (parsed one by one by the caller). */
type ResultPage = readonly unknown[];

/** What a query result needs to be windowed on; anything else about it is the caller's to parse. */
const windowedSchema = z.looseObject({ id: z.string(), created_time: z.string() });

const ROWS_BY_CREATION = [{ timestamp: 'created_time', direction: 'ascending' }] as const;

/**
 * More rows share one `created_time` than one query reaches (a bulk import stamps a minute), so windows on
 * it cannot go past them. Not a source error: the rows before were read, the rest are not reachable.
 */
export class RowCapError extends Error {
  constructor(dataSourceId: string, createdTime: string) {
    super(
      `Notion data source ${dataSourceId}: more rows were created at ${createdTime} than one query returns, so the rows past them were not read`,
    );
    this.name = 'RowCapError';
  }
}

export class NotionClient {
  readonly #ctx: ConnectorContext<unknown>;
  readonly #headers: Record<string, string>;
  readonly #token: string | undefined;

  /** `headers`: the Bearer token and the pinned `Notion-Version` (index.ts `notionHeaders`). */
  constructor(ctx: ConnectorContext<unknown>, headers: Record<string, string>, token: string | undefined) {
    this.#ctx = ctx;
    this.#headers = headers;
    this.#token = token;
  }

  /**
   * Everything the integration can see, pages and data sources, 100 a request. `onServerDate` receives
   * the `Date` header of the first answer: Notion's own clock, which `last_edited_time` is stamped with;
   * `onIncomplete` hears of a page that says the result was cut.
   */
  async *search({
    onServerDate,
    onIncomplete,
  }: {
    onServerDate: (date: string | null) => void;
    onIncomplete: () => void;
  }): AsyncGenerator<ResultPage> {
    let first = true;
    const http = this.#ctx.http;
    // Pagination only sends through `requestJson`; this view of the client reads the first answer's
    // headers on the way, which the pagination helper does not hand out.
    const watching: SourceHttpClient = {
      request: (...args) => http.request(...args),
      requestJson: async (...args) => {
        const res = await http.requestJson(...args);
        if (first) {
          first = false;
          onServerDate(res.headers.get('date'));
        }
        return res;
      },
      getJson: (...args) => http.getJson(...args),
      postJson: (...args) => http.postJson(...args),
      get bytesReceived() {
        return http.bytesReceived;
      },
      get requestCount() {
        return http.requestCount;
      },
    };
    // Oldest edits first: a page edited while the pass pages through moves to the end, where it is
    // read (again) instead of slipping in front of the cursor and being missed.
    for await (const page of this.#list({ http: watching, signal: this.#ctx.signal }, '/v1/search', 'POST', {
      sort: { timestamp: 'last_edited_time', direction: 'ascending' },
    })) {
      // Notion documents no cap on search, but its lists share `request_status`: if it ever says
      // incomplete, the caller must know that search did not list everything.
      if (isIncomplete(page)) onIncomplete();
      yield page.results;
    }
  }

  /** The direct children of a block (a page is a block too). */
  async *blockChildren(blockId: string): AsyncGenerator<ResultPage> {
    for await (const page of this.#list(this.#ctx, `/v1/blocks/${pathSegment(blockId)}/children`, 'GET')) {
      yield page.results;
    }
  }

  /**
   * The results of a data source, every one, oldest first: its rows (pages) and, in a wiki, the data sources
   * of the databases inside it. Past the per-query cap in `created_time` windows (see the header); a row on
   * a window's boundary is answered by both windows and yielded once. Throws {@link RowCapError} when more
   * rows share one `created_time` than a window reaches.
   */
  async *queryDataSource(dataSourceId: string): AsyncGenerator<ResultPage> {
    const path = `/v1/data_sources/${pathSegment(dataSourceId)}/query`;
    let windowStart: string | null = null;
    /** Ids read with the latest `created_time` so far: the next window answers them again. */
    let atLatest = new Set<string>();
    let latest: { raw: string; ms: number } | null = null;
    for (;;) {
      const seenAtStart = atLatest;
      let capped = false;
      const filter =
        windowStart === null
          ? {}
          : { filter: { timestamp: 'created_time', created_time: { on_or_after: windowStart } } };
      for await (const page of this.#list(this.#ctx, path, 'POST', { sorts: ROWS_BY_CREATION, ...filter })) {
        if (isIncomplete(page)) capped = true;
        const fresh: unknown[] = [];
        for (const raw of page.results) {
          const row = windowedSchema.safeParse(raw);
          if (row.success) {
            if (seenAtStart.has(row.data.id)) continue;
            const ms = Date.parse(row.data.created_time);
            if (Number.isFinite(ms) && (latest === null || ms > latest.ms)) {
              latest = { raw: row.data.created_time, ms };
              atLatest = new Set();
            }
            if (latest !== null && ms === latest.ms) atLatest.add(row.data.id);
          }
          fresh.push(raw);
        }
        yield fresh;
      }
      if (!capped) return;
      if (latest === null || latest.raw === windowStart) {
        throw new RowCapError(dataSourceId, latest?.raw ?? windowStart ?? 'one time');
      }
      windowStart = latest.raw;
    }
  }

  /**
   * A data source's rows edited at or after `since`, newest first, at most `limit` (one request, no
   * pagination: a change notification's bounded look, not an enumeration). Throws like any list.
   */
  async recentRows(
    dataSourceId: string,
    { since, limit }: { since: string; limit: number },
  ): Promise<unknown[]> {
    const url = joinUrl(this.#ctx.baseUrl, `/v1/data_sources/${pathSegment(dataSourceId)}/query`);
    const res = await this.#ctx.http.requestJson('POST', url, listSchema, {
      headers: this.#headers,
      json: {
        filter: { timestamp: 'last_edited_time', last_edited_time: { on_or_after: since } },
        sorts: [{ timestamp: 'last_edited_time', direction: 'descending' }],
        page_size: Math.min(limit, PAGE_SIZE),
      },
    });
    return res.data.results;
  }

  /** A page's properties and state; `null` when Notion answers 404 (unshared or deleted). */
  getPage(pageId: string): Promise<NotionPage | null> {
    return this.#getOrNull(`/v1/pages/${pathSegment(pageId)}`, pageSchema);
  }

  /** One block (to find the page a nested child page sits in); `null` on 404. */
  getBlock(blockId: string): Promise<NotionBlock | null> {
    return this.#getOrNull(`/v1/blocks/${pathSegment(blockId)}`, blockSchema);
  }

  /** A database's title and data sources; `null` on 404. */
  getDatabase(databaseId: string): Promise<NotionDatabase | null> {
    return this.#getOrNull(`/v1/databases/${pathSegment(databaseId)}`, databaseSchema);
  }

  async #getOrNull<T>(path: string, schema: z.ZodType<T>): Promise<T | null> {
    try {
      return await this.#ctx.http.getJson(joinUrl(this.#ctx.baseUrl, path), schema, {
        headers: this.#headers,
      });
    } catch (err) {
      if (isSourceHttpError(err) && err.status === 404) return null;
      throw this.fatal(err);
    }
  }

  async *#list(
    ctx: PaginationContext,
    path: string,
    method: 'GET' | 'POST',
    body?: Record<string, unknown>,
  ): AsyncGenerator<NotionList> {
    const pages = paginateCursor(ctx, {
      request: {
        url: joinUrl(this.#ctx.baseUrl, path),
        method,
        headers: this.#headers,
        ...(method === 'GET'
          ? { query: { page_size: PAGE_SIZE } }
          : { json: { ...body, page_size: PAGE_SIZE } }),
      },
      schema: listSchema,
      items: (p) => p.results,
      cursor: { param: 'start_cursor', next: (p) => p.next_cursor, hasMore: (p) => p.has_more },
    });
    try {
      for await (const page of pages) yield page.data;
    } catch (err) {
      throw this.fatal(err);
    }
  }

  /**
   * A refused token (401) or a capability the integration lacks (403) is the whole source's problem:
   * one error naming the source and what it said, never the token. Anything else passes unchanged.
   */
  fatal(err: unknown): unknown {
    if (!isSourceHttpError(err) || (err.status !== 401 && err.status !== 403)) return err;
    const hint =
      err.status === 401
        ? 'The token was revoked or the integration removed: connect again through OAuth, or update source.access_token.'
        : 'The integration lacks the capability to read content; check its capabilities in Notion.';
    return sourceRefusal(SOURCE, 'rejected the token', err, hint, [this.#token]);
  }
}

/** Whether a list page says its result was cut (`request_status.type: "incomplete"`, whatever the reason). */
function isIncomplete(page: NotionList): boolean {
  return page.request_status?.type === 'incomplete';
}
