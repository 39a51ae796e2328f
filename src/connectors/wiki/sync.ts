/**
 * The content sync of `wiki` (Confluence Cloud): every current page and blog post of every current space
 * the account can read.
 *
 * 1. List the current spaces (archived spaces leave with their content).
 * 2. List every current page, then every current blog post, without bodies (250 a request, id order).
 *    These listings are the enumeration: an unchanged site costs them and nothing more.
 * 3. Compare each one's change token with what the connection holds (`known()`) and fetch the body only
 *    of new or changed ones (all of them in a `full` pass), a few requests in flight, yielded in order.
 * 4. Once the listings completed, every held document they did not show has left the source (deleted,
 *    trashed, archived, restricted, or in an archived space): `deleted` (the id pass).
 *
 * The change token is the version number plus a digest of where the document sits (space, parent page):
 * Confluence makes no new version when a page moves, but a move changes its URL and tags.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isAppError } from '../../lib/errors.ts';
import { sourceName } from '../credential-check.ts';
import { isSourceHttpError, isTransientSourceError } from '../http.ts';
import type { ConnectorContext, SourceDocument, SyncEvent, SyncOptions } from '../types.ts';
import {
  type ContentKind,
  fetchContent,
  listCurrentContent,
  listCurrentSpaces,
  WIKI_SOURCE,
  type WikiCredentials,
} from './client.ts';
import { storageToMarkdown } from './render.ts';
import { type ContentWithBody, contentSummarySchema, contentWithBodySchema } from './schemas.ts';
import { knownById } from '../toolkit/known.ts';
import { type ListedRecord, listingPass } from '../toolkit/listing-pass.ts';

export const PAGES_TABLE = 'wiki_pages';
export const BLOGPOSTS_TABLE = 'wiki_blogposts';
export type WikiTable = typeof PAGES_TABLE | typeof BLOGPOSTS_TABLE;

/** The kinds in the order a pass handles them; a checkpoint's position refers to this order. */
export const KINDS: ReadonlyArray<{ kind: ContentKind; table: WikiTable; noun: string }> = [
  { kind: 'pages', table: PAGES_TABLE, noun: 'page' },
  { kind: 'blogposts', table: BLOGPOSTS_TABLE, noun: 'blog post' },
];

/**
 * The checkpoint. `after` is the last listed document a pass has handled (null once the pass completed).
 * A retried `full` pass goes on after it: what came before was stored by this same job, so the sweep at
 * its end keeps it. An incremental pass always lists from the start; re-listing is cheap and unchanged
 * documents are skipped by their tokens, so a position would only cost it its deletion pass.
 */
export const wikiCursorSchema = z.object({
  after: z.object({ table: z.enum([PAGES_TABLE, BLOGPOSTS_TABLE]), id: z.string() }).nullable(),
});
export type WikiCursor = z.infer<typeof wikiCursorSchema>;

/** Body requests in flight at once: enough to hide latency, few enough to stay clear of burst limits. */
const FETCH_CONCURRENCY = 4;
/** Documents handled between checkpoints. */
const CHECKPOINT_EVERY = 100;
/** Body fetches failing in a row for transient reasons (after the client's retries) mean the site is down. */
const MAX_TRANSIENT_IN_A_ROW = 10;

export interface SpaceInfo {
  key: string;
  name: string;
}

/** One listed document: what deciding whether to fetch it needs, without its body. */
interface Listed {
  kind: ContentKind;
  table: WikiTable;
  noun: string;
  id: string;
  title: string;
  spaceId: string;
  parentId: string | null;
  number: number;
}

/** What the whole pass knows when it turns one fetched body into events. */
export interface PassState {
  spaces: Map<string, SpaceInfo>;
  /** Titles of the listed pages, for the parent-page tag. */
  pageTitles: Map<string, string>;
  /** `https://<host>/wiki` as the site names itself (`_links.base`). */
  wikiBase: string;
}

export async function* syncWiki(
  ctx: ConnectorContext<WikiCredentials>,
  opts: SyncOptions<WikiCursor>,
): AsyncGenerator<SyncEvent<WikiCursor>> {
  const spaces = new Map<string, SpaceInfo>();
  for await (const batch of listCurrentSpaces(ctx)) {
    for (const s of batch) spaces.set(s.id, { key: s.key, name: s.name });
  }
  // Filled by the listing; complete by the time tokens are compared and bodies read.
  const state: PassState = { spaces, pageTitles: new Map(), wikiBase: `${ctx.baseUrl}/wiki` };
  const known = opts.mode === 'full' ? undefined : await knownById(opts.known, ctx.signal);
  yield* listingPass<Listed, WikiCursor>({
    signal: ctx.signal,
    known,
    list: () => listEverything(ctx, state),
    token: (e) => changeToken(e.number, location(state, e)),
    resumeAt: (listed) => resumeIndex(listed, opts.cursor?.after ?? null),
    read: async ([entry]) => fetchOne(ctx, state, entry!),
    concurrency: FETCH_CONCURRENCY,
    failures: { max: MAX_TRANSIENT_IN_A_ROW, source: sourceName(WIKI_SOURCE), what: 'document requests' },
    checkpoint: { every: CHECKPOINT_EVERY, cursor: (e) => ({ after: { table: e.table, id: e.id } }) },
  });
  yield { kind: 'checkpoint', cursor: { after: null } };
}

/**
 * Lists every current page, then every current blog post, of the current spaces: the listing of the
 * pass (unreadable records are failures), filling in the parent titles and the site's own base URL.
 */
async function* listEverything(
  ctx: ConnectorContext<WikiCredentials>,
  state: PassState,
): AsyncGenerator<ListedRecord<Listed, WikiCursor>> {
  let wikiBase: string | undefined;
  for (const { kind, table, noun } of KINDS) {
    for await (const page of listCurrentContent(ctx, kind)) {
      wikiBase ??= page._links?.base;
      for (const raw of page.results) {
        const parsed = contentSummarySchema.safeParse(raw);
        if (!parsed.success) {
          const id = idOf(raw);
          const error = new Error(
            `${sourceName(WIKI_SOURCE)} listed a ${noun}${id ? ` (${id})` : ''} in an unexpected shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`,
          );
          yield {
            kind: 'unreadable',
            id,
            events: [
              { kind: 'failure', ...(id === undefined ? {} : { externalId: id }), error, retryable: false },
            ],
          };
          continue;
        }
        const c = parsed.data;
        // The listing asked for current content; pages of archived spaces still say `current`.
        if (c.status !== 'current' || !state.spaces.has(c.spaceId)) continue;
        if (table === PAGES_TABLE) state.pageTitles.set(c.id, c.title);
        const entry: Listed = {
          kind,
          table,
          noun,
          id: c.id,
          title: c.title,
          spaceId: c.spaceId,
          parentId: c.parentId ?? null,
          number: c.version.number,
        };
        yield { kind: 'item', id: c.id, entry };
      }
    }
  }
  state.wikiBase = (wikiBase ?? state.wikiBase).replace(/\/+$/, '');
}

/** Where the listing goes on after `after`; by position, else (it left since) by id order. */
function resumeIndex(listed: readonly Listed[], after: WikiCursor['after']): number {
  if (!after) return 0;
  const at = listed.findIndex((e) => e.table === after.table && e.id === after.id);
  if (at >= 0) return at + 1;
  const order = (t: WikiTable) => KINDS.findIndex((k) => k.table === t);
  const next = listed.findIndex(
    (e) => order(e.table) > order(after.table) || (e.table === after.table && compareIds(e.id, after.id) > 0),
  );
  return next === -1 ? listed.length : next;
}

/** Numeric ids in number order, without parsing them into numbers that may not hold them. */
function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b) && a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function idOf(raw: unknown): string | undefined {
  if (raw && typeof raw === 'object' && 'id' in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === 'string' && id !== '') return id;
    if (typeof id === 'number') return String(id);
  }
  return undefined;
}

/** Where a document sits, as far as its URL and tags show it. */
interface Location {
  spaceId: string;
  space: SpaceInfo | undefined;
  parentId: string | null;
  parentTitle: string | undefined;
}

function location(
  state: PassState,
  c: { table: WikiTable; spaceId: string; parentId: string | null },
): Location {
  const parentId = c.table === PAGES_TABLE ? c.parentId : null;
  return {
    spaceId: c.spaceId,
    space: state.spaces.get(c.spaceId),
    parentId,
    parentTitle: parentId ? state.pageTitles.get(parentId) : undefined,
  };
}

/** `version.number` plus a digest of the location: a move or a renamed space or parent changes it too. */
function changeToken(number: number, where: Location): string {
  const digest = createHash('sha256')
    .update(
      [
        where.spaceId,
        where.space?.key ?? '',
        where.space?.name ?? '',
        where.parentId ?? '',
        where.parentTitle ?? '',
      ].join('\u0000'),
    )
    .digest('hex')
    .slice(0, 12);
  return `${number}:${digest}`;
}

interface Outcome {
  events: SyncEvent<WikiCursor>[];
  /** Set when the document failed for a reason another attempt may not have (5xx, network). */
  transient?: Error;
}

/** The document a fetched body is of, as far as its messages and table need it. */
export interface ContentTarget {
  table: WikiTable;
  noun: string;
  id: string;
  /** The listed title, for messages (unknown when an event named the document). */
  title?: string;
}

function failure(target: ContentTarget, message: string, { retryable }: { retryable: boolean }): Outcome {
  const title = target.title === undefined ? '' : ` (${JSON.stringify(target.title)})`;
  const error = new Error(`${sourceName(WIKI_SOURCE)} ${target.noun} ${target.id}${title} ${message}`);
  return {
    events: [{ kind: 'failure', externalId: target.id, table: target.table, error, retryable }],
    ...(retryable ? { transient: error } : {}),
  };
}

/**
 * One document's body turned into its events. Problems of this document alone become its `failure`;
 * refused credentials and cancellation end the sync.
 */
async function fetchOne(
  ctx: ConnectorContext<WikiCredentials>,
  state: PassState,
  entry: Listed,
): Promise<Outcome> {
  let body: unknown;
  try {
    const got = await fetchContent(ctx, entry.kind, entry.id);
    if (!got.found) {
      // Listed moments ago, so most likely deleted or restricted meanwhile; the next listing settles it
      // (the id pass removes it then), and until then the stored copy stays.
      return failure(entry, 'was listed but answers 404 (deleted or restricted since?)', {
        retryable: false,
      });
    }
    body = got.body;
  } catch (err) {
    return readFailure(ctx, entry, err);
  }
  return contentOutcome(state, entry, body);
}

/** A read that failed for this document alone becomes its failure; anything else ends the pass. */
export function readFailure(ctx: { signal: AbortSignal }, target: ContentTarget, err: unknown): Outcome {
  if (ctx.signal.aborted || isAppError(err)) throw err;
  if (!isSourceHttpError(err)) throw err;
  return failure(target, `could not be read: ${err.message}`, { retryable: isTransientSourceError(err) });
}

/**
 * The events of one fetched page or blog post (`GET /{kind}/{id}?body-format=storage`), with the spaces
 * and parent titles `state` knows: a document as the sync makes it, `deleted` when it is no longer
 * current or its space is not (or unknown to `state`), or its failure.
 */
export function contentOutcome(state: PassState, target: ContentTarget, body: unknown): Outcome {
  const parsed = contentWithBodySchema.safeParse(body);
  if (!parsed.success) {
    return failure(
      target,
      `answered in an unexpected shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`,
      { retryable: false },
    );
  }
  const c = parsed.data;
  const where = location(state, { table: target.table, spaceId: c.spaceId, parentId: c.parentId ?? null });
  // Trashed, archived or moved into an archived space between the listing and now.
  if (c.status !== 'current' || !where.space) {
    return { events: [{ kind: 'deleted', externalId: c.id, table: target.table }] };
  }
  const storage = c.body?.storage?.value;
  if (storage === undefined)
    return failure(target, 'answered without its storage body', { retryable: false });
  let markdown: string;
  try {
    markdown = storageToMarkdown(storage, {
      wikiBase: state.wikiBase,
      spaceKey: where.space.key,
      contentId: c.id,
    });
  } catch (err) {
    return failure(target, `could not be converted: ${err instanceof Error ? err.message : String(err)}`, {
      retryable: false,
    });
  }
  return { events: [{ kind: 'document', doc: toDocument(state, target.table, c, where, markdown) }] };
}

function toDocument(
  state: PassState,
  table: WikiTable,
  c: ContentWithBody,
  where: Location,
  markdown: string,
): SourceDocument {
  const base = (c._links?.base ?? state.wikiBase).replace(/\/+$/, '');
  const webui = c._links?.webui ?? `/pages/viewpage.action?pageId=${encodeURIComponent(c.id)}`;
  const tags = ['wiki', where.space?.key, where.space?.name, where.parentTitle].filter(
    (t): t is string => typeof t === 'string' && t.trim() !== '',
  );
  return {
    externalId: c.id,
    title: c.title,
    url: `${base}${webui}`,
    markdown,
    ...(c.version.createdAt ? { updatedAt: c.version.createdAt } : {}),
    visibility: 'private',
    tags: [...new Set(tags)],
    table,
    version: changeToken(c.version.number, where),
  };
}
