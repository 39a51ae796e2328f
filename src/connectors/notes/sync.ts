/**
 * The content sync of a Notion workspace: pages (`notes_pages`) and database rows
 * (`notes_database_rows`).
 *
 * Enumeration. Search lists what the integration can see, but not everything: pages only reachable
 * under a shared parent can be missing. So a pass (1) reads all of search (pages and data sources; ids,
 * parents, titles and `last_edited_time`, no bodies), (2) takes each page found and, when its body is
 * read, walks the tree: `child_page` blocks are documents of their own, `child_database` blocks lead to
 * data sources, (3) queries every data source completely, past Notion's per-query cap (client.ts): its
 * rows are the documents of `notes_database_rows`, and the data sources a wiki's query answers (the
 * databases inside the wiki) are queried in turn, and (4) asks `GET /v1/pages/{id}` about every document
 * the connection holds that none of this reached: 404 means unshared or deleted, `in_trash` /
 * `archived` / `is_archived` mean gone, anything else is live and handled like a found page. A Set of
 * the ids decided in this pass keeps anything from being read twice.
 *
 * Change detection. A document's version is `<last_edited_time>|<parent id>|<content hash>`. A page whose
 * time or parent differs from the stored version is read again (the parent catches a move, which need not
 * touch the page's own time); otherwise its blocks are not fetched, and its children are reached through
 * search or step 4. Notion rounds `last_edited_time` to the minute, so an edit in the minute a page was
 * read leaves the time unchanged: the cursor keeps `since`, the minute in which the previous pass
 * began by Notion's clock (the `Date` header of the first search answer, less a margin for the header's
 * rounding and the time between Notion's snapshot and its answer): a page read in that pass and edited
 * since in the same minute has a stored time at or after `since`. Pages whose stored time
 * is at or after `since` are read again, and yielded only when the content hash differs, so a re-check
 * of an unchanged page writes nothing.
 *
 * A block whose children answer 404 inside a readable page (a synced copy whose original sits in a page
 * not shared with the integration) costs that block only: the page is synced without its content, and a
 * failure naming the page and the block says what was left out.
 *
 * Deletions come only from Notion's own signals about one page (404, the trash flags), never from
 * absence in an enumeration. A full pass (`reset`) reads every body and leaves the sweep of whatever it
 * did not yield to the runner.
 *
 * Checkpoints: the cursor never names a position (search order moves with every edit), so a restarted
 * job runs the pass again and the stored versions skip what it already committed; mid-pass checkpoints
 * keep the previous `since`, only the last one moves it.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isAppError } from '../../lib/errors.ts';
import { isSourceHttpError, isTransientSourceError, SourcePermissionError } from '../http.ts';
import { PaginationError } from '../toolkit/pagination.ts';
import { knownById } from '../toolkit/known.ts';
import type { ConnectorContext, KnownDocument, SourceDocument, SyncEvent, SyncOptions } from '../types.ts';
import { NotionClient, RowCapError } from './client.ts';
import {
  type BlockNode,
  MalformedBlockError,
  pageTitle,
  plainText,
  type RenderOptions,
  renderBlocks,
  renderProperties,
} from './render.ts';
import {
  blockSchema,
  dataSourceSchema,
  type NotionPage,
  pageSchema,
  searchItemSchema,
  syncedBlockPayload,
} from './schemas.ts';

const TABLE_PAGES = 'notes_pages';
const TABLE_ROWS = 'notes_database_rows';

/** Data sources remembered between passes, so one search misses does not cost a GET per row. */
const MAX_REMEMBERED_DATA_SOURCES = 500;
/** Events between mid-pass checkpoints. */
const CHECKPOINT_EVERY = 100;
const MINUTE = 60_000;
/** How long before its `Date` header Notion may have read what it answers. */
const SNAPSHOT_MARGIN = 30_000;
/** How far our clock may be ahead of Notion's when no `Date` header says. */
const OWN_CLOCK_MARGIN = 4 * MINUTE;

export const notesCursorSchema = z.object({
  /**
   * ISO time (a whole minute): pages whose stored `last_edited_time` is at or after it are read again,
   * since an edit in that minute does not change the time Notion reports. Null: nothing to re-check.
   */
  since: z.string().nullable(),
  /** The data sources the last pass queried, queried again even when search does not list them. */
  dataSources: z.array(z.string()).default([]),
});
export type NotesCursor = z.infer<typeof notesCursorSchema>;

/** The credentials' part the sync needs: the request headers and the token to keep out of messages. */
interface NotesAuth {
  headers: Record<string, string>;
  token: string | undefined;
}

/** What a pass knows of a page without reading its body. */
interface PageMeta {
  id: string;
  lastEdited: string;
  parentType: string;
  /** The parent page, block, data source or database; null for the workspace. */
  parentId: string | null;
  databaseId: string | null;
  title: string;
  url: string;
  row: boolean;
  gone: boolean;
}

/** A page to decide: its id, and what is already known about it. */
interface Subject {
  id: string;
  meta?: PageMeta;
  page?: NotionPage;
}

interface Found {
  childPages: string[];
  childDatabases: string[];
}
const NOTHING: Found = { childPages: [], childDatabases: [] };

/** A block of a page's tree whose children Notion refused with 404; the page is read without them. */
interface LeftOut {
  blockId: string;
  type: string;
  /** The original a synced copy shows, when it is one. */
  syncedFrom: string | null;
  cause: unknown;
}

/** Reading one block's children failed; names the block so a 404 of the page itself is told apart. */
class TreeError extends Error {
  readonly blockId: string;
  constructor(blockId: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'TreeError';
    this.blockId = blockId;
  }
}

export async function* syncNotes(
  ctx: ConnectorContext<unknown>,
  opts: SyncOptions<NotesCursor>,
  auth: NotesAuth,
): AsyncGenerator<SyncEvent<NotesCursor>> {
  const pass = new Pass(ctx, opts, new NotionClient(ctx, auth.headers, auth.token));
  let events = 0;
  for await (const event of pass.run()) {
    yield event;
    if (++events % CHECKPOINT_EVERY === 0) yield { kind: 'checkpoint', cursor: pass.midCursor() };
  }
  yield { kind: 'checkpoint', cursor: pass.finalCursor() };
}

class Pass {
  readonly #ctx: ConnectorContext<unknown>;
  readonly #opts: SyncOptions<NotesCursor>;
  readonly #client: NotionClient;
  readonly #full: boolean;
  /** The previous pass's `since` (ms): stored times at or after it are re-checked. */
  readonly #recheckFrom: number | null;

  /** The connection's documents (their ids are stored as {@link canon} writes them). */
  #known = new Map<string, KnownDocument>();
  /** Pages (not rows) search listed, by id. */
  readonly #metas = new Map<string, PageMeta>();
  /** Rows search listed: read through their data source, or asked about one by one when it is not. */
  readonly #searchRows = new Set<string>();
  /** Documents decided in this pass (read, skipped as unchanged, failed or gone). */
  readonly #done = new Set<string>();
  /** Data sources seen in this pass, and those still to query. */
  readonly #dataSources = new Set<string>();
  readonly #dataSourceQueue: string[] = [];
  readonly #liveDataSources = new Set<string>();
  readonly #databases = new Set<string>();
  readonly #titles = new Map<string, string | null>();
  readonly #databaseTitles = new Map<string, string | null>();
  /** Child page → the page whose block tree holds it (its parent may be a block in that tree). */
  readonly #enclosing = new Map<string, string>();
  readonly #blockPages = new Map<string, string | null>();
  #since: number | null = null;

  constructor(ctx: ConnectorContext<unknown>, opts: SyncOptions<NotesCursor>, client: NotionClient) {
    this.#ctx = ctx;
    this.#opts = opts;
    this.#client = client;
    this.#full = opts.mode === 'full';
    const since = this.#full ? null : (opts.cursor?.since ?? null);
    const parsed = since === null ? Number.NaN : Date.parse(since);
    this.#recheckFrom = Number.isFinite(parsed) ? parsed : null;
    for (const id of opts.cursor?.dataSources ?? []) this.#queueDataSource(id);
  }

  /** Where a restarted job or the next sync starts while this pass is not complete. */
  midCursor(): NotesCursor {
    const previous = this.#full ? null : (this.#opts.cursor?.since ?? null);
    return {
      since: previous ?? this.#sinceIso(),
      dataSources: [...new Set([...(this.#opts.cursor?.dataSources ?? []), ...this.#liveDataSources])].slice(
        0,
        MAX_REMEMBERED_DATA_SOURCES,
      ),
    };
  }

  finalCursor(): NotesCursor {
    return {
      since: this.#sinceIso(),
      dataSources: [...this.#liveDataSources].slice(0, MAX_REMEMBERED_DATA_SOURCES),
    };
  }

  #sinceIso(): string | null {
    return this.#since === null ? null : new Date(this.#since).toISOString();
  }

  async *run(): AsyncGenerator<SyncEvent<NotesCursor>> {
    this.#known = await knownById(this.#opts.known, this.#ctx.signal);

    let serverDate: string | null = null;
    let searchCut = false;
    const pages = this.#client.search({
      onServerDate: (date) => {
        serverDate = date;
      },
      onIncomplete: () => {
        searchCut = true;
      },
    });
    for await (const results of pages) {
      for (const raw of results) yield* this.#takeSearchResult(raw);
    }
    this.#since = watermark(serverDate, Date.now());
    if (searchCut) {
      // Without a document id, the failure keeps a reset from sweeping what search did not list.
      yield failure(
        undefined,
        new Error(
          'Notion search said its result was incomplete: pages it did not list are synced only when reached through another page or database',
        ),
        { retryable: false },
      );
    }

    for (const meta of this.#metas.values()) yield* this.#walk({ id: meta.id, meta });
    yield* this.#drainDataSources();

    // Documents held that nothing above reached, and rows search listed outside any queried data source.
    for (const id of [...this.#known.keys(), ...this.#searchRows]) {
      this.#ctx.signal.throwIfAborted();
      if (this.#done.has(id)) continue;
      yield* this.#walk({ id });
      yield* this.#drainDataSources();
    }
  }

  // -------------------------------------------------------------------------------------------------
  // Search
  // -------------------------------------------------------------------------------------------------

  async *#takeSearchResult(raw: unknown): AsyncGenerator<SyncEvent<NotesCursor>> {
    const head = searchItemSchema.safeParse(raw);
    if (!head.success) {
      // Without an id nothing tells which document this was: the failure blocks a reset's sweep.
      yield failure(undefined, new Error('Notion search answered a result without an id'), {
        retryable: false,
      });
      return;
    }
    if (head.data.object === 'data_source') {
      const ds = dataSourceSchema.safeParse(raw);
      if (ds.success && !ds.data.in_trash && !ds.data.archived) this.#queueDataSource(ds.data.id);
      return;
    }
    if (head.data.object !== 'page') return;
    const id = canon(head.data.id);
    const parsed = pageSchema.safeParse(raw);
    if (!parsed.success) {
      this.#done.add(id);
      yield failure(id, new Error(`Notion page ${id} is not in Notion's page shape`), {
        retryable: false,
      });
      return;
    }
    const meta = metaOf(parsed.data);
    if (meta.gone) {
      this.#done.add(id);
      yield* this.#gone(id);
      return;
    }
    if (meta.row) {
      this.#searchRows.add(id);
      if (parsed.data.parent.data_source_id) this.#queueDataSource(parsed.data.parent.data_source_id);
      return;
    }
    this.#metas.set(id, meta);
  }

  // -------------------------------------------------------------------------------------------------
  // Pages and their trees
  // -------------------------------------------------------------------------------------------------

  /** Decides `root` and, below every page whose body it read, the child pages and databases found. */
  async *#walk(root: Subject): AsyncGenerator<SyncEvent<NotesCursor>> {
    const stack: Subject[] = [root];
    while (stack.length > 0) {
      this.#ctx.signal.throwIfAborted();
      const subject = stack.pop()!;
      const found = yield* this.#decide(subject);
      for (const child of found.childPages) {
        if (this.#done.has(child)) continue;
        this.#enclosing.set(child, subject.id);
        stack.push({ id: child });
      }
      for (const db of found.childDatabases) await this.#discoverDatabase(db);
    }
  }

  async *#decide(subject: Subject): AsyncGenerator<SyncEvent<NotesCursor>, Found> {
    const id = subject.id;
    if (this.#done.has(id)) return NOTHING;
    const resolved = yield* this.#resolve(subject);
    if (!resolved) return NOTHING;
    const { page, meta } = resolved;

    const known = this.#known.get(id);
    const stored = known?.version ? parseVersion(known.version) : null;
    const table = meta.row ? TABLE_ROWS : TABLE_PAGES;
    let recheck = false;
    if (!this.#full && stored && known?.table === table) {
      if (stored.edited === meta.lastEdited && stored.parent === parentKey(meta)) {
        if (this.#recheckFrom === null || Date.parse(stored.edited) < this.#recheckFrom) return NOTHING;
        recheck = true;
      }
    }

    let nodes: BlockNode[];
    let found: Found;
    let leftOut: LeftOut[];
    try {
      ({ nodes, found, leftOut } = await this.#fetchTree(id));
    } catch (err) {
      yield* this.#treeFailed(id, err);
      return NOTHING;
    }

    let doc: SourceDocument;
    try {
      doc = await this.#toDocument(id, meta, page, nodes, table);
    } catch (err) {
      if (this.#isFatal(err)) throw this.#client.fatal(err);
      const transient = !(err instanceof MalformedBlockError) && isTransientSourceError(err);
      yield failure(id, new Error(`Notion page ${id}: ${messageOf(err)}`), { retryable: transient });
      return found;
    }
    const hash = contentHash(doc);
    if (!(recheck && stored?.hash === hash)) {
      yield { kind: 'document', doc: { ...doc, version: `${meta.lastEdited}|${parentKey(meta)}|${hash}` } };
    }
    for (const block of leftOut) yield leftOutNote(id, table, block);
    return found;
  }

  /**
   * The subject's page metadata (and the page, for a row), read from Notion when search did not give
   * them; marks the subject decided. Undefined when it is gone (its deletion yielded).
   */
  async *#resolve(
    subject: Subject,
  ): AsyncGenerator<SyncEvent<NotesCursor>, { page: NotionPage | undefined; meta: PageMeta } | undefined> {
    const id = subject.id;
    let page = subject.page;
    let meta = subject.meta ?? (page ? metaOf(page) : this.#metas.get(id));
    if (!meta || (meta.row && !page)) {
      const got = await this.#client.getPage(id);
      if (!got) {
        this.#done.add(id);
        yield* this.#gone(id);
        return undefined;
      }
      page = got;
      meta = metaOf(got);
    }
    this.#done.add(id);
    this.#titles.set(id, meta.title);
    if (meta.gone) {
      yield* this.#gone(id);
      return undefined;
    }
    return { page, meta };
  }

  /** A page's tree could not be read: the sync ends, the page is gone, or the page fails. */
  async *#treeFailed(id: string, err: unknown): AsyncGenerator<SyncEvent<NotesCursor>> {
    if (this.#isFatal(err)) throw this.#client.fatal(err instanceof TreeError ? err.cause : err);
    const cause = err instanceof TreeError ? err.cause : err;
    if (err instanceof TreeError && err.blockId === id && isStatus(cause, 404)) {
      // The page's own children answered 404: it left between listing and reading, if Notion agrees.
      if (!(await this.#client.getPage(id))) {
        yield* this.#gone(id);
        return;
      }
    }
    yield failure(id, new Error(`Notion page ${id}: ${messageOf(cause)}`), {
      retryable: isTransientSourceError(cause),
    });
  }

  /** The page's document (without its version): its blocks, and a row's properties above them. */
  async #toDocument(
    id: string,
    meta: PageMeta,
    page: NotionPage | undefined,
    nodes: BlockNode[],
    table: string,
  ): Promise<SourceDocument> {
    const render: RenderOptions = { titleOf: (ref) => this.#metas.get(canon(ref))?.title };
    const body = renderBlocks(nodes, render);
    const markdown =
      meta.row && page
        ? [renderProperties(page.properties, render), body].filter(Boolean).join('\n\n')
        : body;
    return {
      externalId: id,
      title: meta.title,
      url: meta.url,
      markdown,
      updatedAt: meta.lastEdited,
      visibility: 'private',
      tags: await this.#tagsOf(meta),
      table,
    };
  }

  async *#gone(id: string): AsyncGenerator<SyncEvent<NotesCursor>> {
    const known = this.#known.get(id);
    if (known) yield { kind: 'deleted', externalId: id, table: known.table };
  }

  /**
   * A page's block tree: children of every block with children, a synced copy's from its original,
   * child pages and databases noted (they are documents of their own) but not entered. A block whose
   * children answer 404 is kept without them and listed in `leftOut`; only the page's own 404 throws.
   */
  async #fetchTree(pageId: string): Promise<{ nodes: BlockNode[]; found: Found; leftOut: LeftOut[] }> {
    const found: Found = { childPages: [], childDatabases: [] };
    const leftOut: LeftOut[] = [];
    const read = new Set<string>([pageId]);
    const nodes = await this.#children(pageId);
    const pending = [...nodes];
    while (pending.length > 0) {
      this.#ctx.signal.throwIfAborted();
      const node = pending.pop()!;
      const block = node.block;
      if (block.type === 'child_page') {
        found.childPages.push(canon(block.id));
        continue;
      }
      if (block.type === 'child_database') {
        found.childDatabases.push(canon(block.id));
        continue;
      }
      let from: string | null = block.has_children ? block.id : null;
      let syncedFrom: string | null = null;
      if (block.type === 'synced_block') {
        const synced = syncedBlockPayload.safeParse(block['synced_block']);
        if (synced.success && synced.data.synced_from) from = syncedFrom = synced.data.synced_from.block_id;
      }
      // A block already read in this tree (a synced original shown twice, or a loop) is not read again.
      if (from === null || read.has(canon(from))) continue;
      read.add(canon(from));
      try {
        node.children = await this.#children(from);
      } catch (err) {
        // The page itself answered; a 404 below it is that block's (an original not shared with the
        // integration), so the rest of the page still counts.
        if (!(err instanceof TreeError && isStatus(err.cause, 404))) throw err;
        leftOut.push({ blockId: canon(block.id), type: block.type, syncedFrom, cause: err.cause });
        continue;
      }
      pending.push(...node.children);
    }
    found.childPages.reverse();
    return { nodes, found, leftOut };
  }

  async #children(blockId: string): Promise<BlockNode[]> {
    const out: BlockNode[] = [];
    try {
      for await (const results of this.#client.blockChildren(blockId)) {
        for (const raw of results) {
          const parsed = blockSchema.safeParse(raw);
          if (!parsed.success) {
            throw new MalformedBlockError(`a child of block ${blockId} is not in Notion's block shape`);
          }
          if (parsed.data.in_trash || parsed.data.archived) continue;
          out.push({ block: parsed.data, children: [] });
        }
      }
    } catch (err) {
      if (this.#isFatal(err)) throw err;
      throw new TreeError(blockId, err);
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------------
  // Databases and rows
  // -------------------------------------------------------------------------------------------------

  #queueDataSource(id: string): void {
    const key = canon(id);
    if (this.#dataSources.has(key)) return;
    this.#dataSources.add(key);
    this.#dataSourceQueue.push(key);
  }

  async #discoverDatabase(databaseId: string): Promise<void> {
    if (this.#databases.has(databaseId)) return;
    this.#databases.add(databaseId);
    const db = await this.#client.getDatabase(databaseId);
    if (!db || db.in_trash || db.archived) return;
    this.#databaseTitles.set(databaseId, plainText(db.title).trim() || null);
    for (const ds of db.data_sources) this.#queueDataSource(ds.id);
  }

  async *#drainDataSources(): AsyncGenerator<SyncEvent<NotesCursor>> {
    for (let next = this.#dataSourceQueue.shift(); next !== undefined; next = this.#dataSourceQueue.shift()) {
      yield* this.#queryRows(next);
    }
  }

  async *#queryRows(dataSourceId: string): AsyncGenerator<SyncEvent<NotesCursor>> {
    try {
      for await (const results of this.#client.queryDataSource(dataSourceId)) {
        for (const raw of results) yield* this.#takeQueryResult(raw);
      }
      this.#liveDataSources.add(dataSourceId);
    } catch (err) {
      if (this.#isFatal(err)) throw this.#client.fatal(err);
      // Gone (404): its rows are asked about one by one. Otherwise the rows not read stay as they are,
      // and the failure (no document id) keeps a reset from sweeping them.
      if (isStatus(err, 404)) return;
      const error =
        err instanceof RowCapError ? err : new Error(`Notion data source ${dataSourceId}: ${messageOf(err)}`);
      yield failure(undefined, error, { retryable: isTransientSourceError(err) });
    }
  }

  /** A row of a query, or (a wiki's) the data source of a database inside it: queried in its turn. */
  async *#takeQueryResult(raw: unknown): AsyncGenerator<SyncEvent<NotesCursor>> {
    const head = searchItemSchema.safeParse(raw);
    if (head.success && head.data.object === 'data_source') {
      const ds = dataSourceSchema.safeParse(raw);
      if (ds.success && !ds.data.in_trash && !ds.data.archived) this.#queueDataSource(ds.data.id);
      return;
    }
    const parsed = pageSchema.safeParse(raw);
    if (!parsed.success) {
      const id = head.success ? canon(head.data.id) : undefined;
      if (id) this.#done.add(id);
      yield failure(id, new Error(`Notion row ${id ?? '(no id)'} is not in Notion's page shape`), {
        retryable: false,
      });
      return;
    }
    yield* this.#walk({ id: canon(parsed.data.id), page: parsed.data });
  }

  // -------------------------------------------------------------------------------------------------
  // Tags
  // -------------------------------------------------------------------------------------------------

  /** `notes`, plus the parent database's title (rows) or the parent page's title (pages). */
  async #tagsOf(meta: PageMeta): Promise<string[]> {
    const label = meta.row
      ? meta.databaseId
        ? await this.#databaseTitle(meta.databaseId)
        : null
      : await this.#parentPageTitle(meta);
    return label ? ['notes', label] : ['notes'];
  }

  async #databaseTitle(databaseId: string): Promise<string | null> {
    if (!this.#databaseTitles.has(databaseId)) {
      const db = await this.#client.getDatabase(databaseId);
      this.#databaseTitles.set(databaseId, db ? plainText(db.title).trim() || null : null);
    }
    return this.#databaseTitles.get(databaseId) ?? null;
  }

  async #parentPageTitle(meta: PageMeta): Promise<string | null> {
    let parentPage: string | null = null;
    if (meta.parentType === 'page_id') parentPage = meta.parentId;
    else if (meta.parentType === 'block_id' && meta.parentId) {
      parentPage = this.#enclosing.get(meta.id) ?? (await this.#pageOfBlock(meta.parentId));
    }
    if (!parentPage) return null;
    if (!this.#titles.has(parentPage)) {
      const listed = this.#metas.get(parentPage);
      if (listed) this.#titles.set(parentPage, listed.title);
      else {
        const got = await this.#client.getPage(parentPage);
        this.#titles.set(parentPage, got ? pageTitle(got.properties) : null);
      }
    }
    return this.#titles.get(parentPage) ?? null;
  }

  /** The page a block sits in, climbing block parents (a child page inside a column or toggle). */
  async #pageOfBlock(blockId: string): Promise<string | null> {
    const cached = this.#blockPages.get(blockId);
    if (cached !== undefined) return cached;
    let current = blockId;
    let page: string | null = null;
    for (let hop = 0; hop < 8; hop++) {
      const block = await this.#client.getBlock(current);
      const parent = block?.parent;
      if (!parent) break;
      if (parent.type === 'page_id' && parent.page_id) {
        page = canon(parent.page_id);
        break;
      }
      if (parent.type !== 'block_id' || !parent.block_id) break;
      current = parent.block_id;
    }
    this.#blockPages.set(blockId, page);
    return page;
  }

  #isFatal(err: unknown): boolean {
    if (this.#ctx.signal.aborted) return true;
    const e = err instanceof TreeError ? err.cause : err;
    return e instanceof PaginationError || isAppError(e) || isStatus(e, 401) || isStatus(e, 403);
  }
}

// ---------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------

/** Ids as Notion's API writes them (lower-case, dashed), whatever form they arrived in. */
function canon(id: string): string {
  const hex = id.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return id;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function normalizeTime(value: string): string {
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : value;
}

function metaOf(page: NotionPage): PageMeta {
  const p = page.parent;
  const parentId =
    p.type === 'page_id'
      ? p.page_id
      : p.type === 'block_id'
        ? p.block_id
        : p.type === 'data_source_id'
          ? p.data_source_id
          : p.type === 'database_id'
            ? p.database_id
            : undefined;
  return {
    id: canon(page.id),
    lastEdited: normalizeTime(page.last_edited_time),
    parentType: p.type,
    parentId: parentId ? canon(parentId) : null,
    databaseId: p.database_id ? canon(p.database_id) : null,
    title: pageTitle(page.properties),
    url: page.url,
    row: p.type === 'data_source_id' || p.type === 'database_id',
    gone: page.in_trash === true || page.archived === true || page.is_archived === true,
  };
}

function parentKey(meta: PageMeta): string {
  return meta.parentId ?? meta.parentType;
}

/** A stored version: `<last_edited_time>|<parent>|<hash>`; anything else reads as unknown. */
function parseVersion(version: string): { edited: string; parent: string; hash: string } | null {
  const parts = version.split('|');
  if (parts.length !== 3) return null;
  return { edited: normalizeTime(parts[0]!), parent: parts[1]!, hash: parts[2]! };
}

function contentHash(doc: SourceDocument): string {
  return createHash('sha256')
    .update(JSON.stringify([doc.title, doc.url, doc.tags, doc.table, doc.markdown]))
    .digest('base64url')
    .slice(0, 22);
}

/**
 * The `since` of this pass: the minute of Notion's clock when the pass began. The `Date` header is
 * rounded to the second and stamped after Notion took its snapshot, so the minute is taken a little
 * earlier; without the header our own clock stands in, with room for skew.
 */
function watermark(serverDate: string | null, now: number): number {
  const told = serverDate ? Date.parse(serverDate) : Number.NaN;
  const base = Number.isFinite(told) ? told - SNAPSHOT_MARGIN : now - OWN_CLOCK_MARGIN;
  return Math.floor(base / MINUTE) * MINUTE;
}

/**
 * The note that a page was synced without one block's content: a failure of the page (counted and shown
 * with the job's failures) that is not retried, since Notion answers the same until someone shares more.
 */
function leftOutNote(pageId: string, table: string, block: LeftOut): SyncEvent<NotesCursor> {
  const what = block.syncedFrom
    ? `synced block ${block.blockId}: its original, block ${canon(block.syncedFrom)}, sits in a page not shared with the integration; share that page with the integration to include it`
    : `the content of block ${block.blockId} (${block.type}), which Notion did not find`;
  const message = `Notion page ${pageId} was synced without ${what} (${messageOf(block.cause)})`;
  return {
    kind: 'failure',
    externalId: pageId,
    table,
    // A page not shared with the integration is a permission someone can grant; a block gone is not.
    error: block.syncedFrom ? new SourcePermissionError(message) : new Error(message),
    retryable: false,
  };
}

function failure(
  externalId: string | undefined,
  error: Error,
  { retryable }: { retryable: boolean },
): SyncEvent<NotesCursor> {
  return externalId === undefined
    ? { kind: 'failure', error, retryable }
    : { kind: 'failure', externalId, error, retryable };
}

function isStatus(err: unknown, status: number): boolean {
  return isSourceHttpError(err) && err.status === status;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
