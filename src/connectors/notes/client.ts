/**
 * The Notion API calls of the content sync: paths, headers, pagination (vendor-apis/notion.md 3-4).
 * Every list is paginated with `start_cursor` / `page_size` (100, the maximum): in the query string for
 * GET, in the JSON body for POST. Retries (429 with `Retry-After`, 5xx) are `ctx.http`'s.
 *
 * 401 and 403 mean the token no longer reads the workspace: they become one `source_auth_failed` error
 * naming the source, whichever call met them.
 */
import type { z } from 'zod';
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
  pageSchema,
} from './schemas.ts';

const PAGE_SIZE = 100;
const SOURCE = { label: 'Notion', type: 'notes' } as const;

/** One page of a list: its raw results (parsed one by one by the caller). */
type ResultPage = readonly unknown[];

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
   * the `Date` header of the first answer: Notion's own clock, which `last_edited_time` is stamped with.
   */
  async *search(onServerDate: (date: string | null) => void): AsyncGenerator<ResultPage> {
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
    yield* this.#list({ http: watching, signal: this.#ctx.signal }, '/v1/search', 'POST', {
      sort: { timestamp: 'last_edited_time', direction: 'ascending' },
    });
  }

  /** The direct children of a block (a page is a block too). */
  blockChildren(blockId: string): AsyncGenerator<ResultPage> {
    return this.#list(this.#ctx, `/v1/blocks/${pathSegment(blockId)}/children`, 'GET');
  }

  /** The rows of a data source, every one (the id comparison for deletions needs them all). */
  queryDataSource(dataSourceId: string): AsyncGenerator<ResultPage> {
    return this.#list(this.#ctx, `/v1/data_sources/${pathSegment(dataSourceId)}/query`, 'POST', {});
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
  ): AsyncGenerator<ResultPage> {
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
      for await (const page of pages) yield page.data.results;
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
