/**
 * The content sync of `support_desk` (Zendesk): Help Center articles, and, when the connection asks for
 * them (`include_tickets`), solved and closed tickets with their public comments.
 *
 * Articles:
 * 1. Categories and sections are listed once per pass: the tags and the `Category > Section` context of
 *    every article, and part of its change token (a renamed section changes its articles' text and tags).
 * 2. The incremental article export (§4.3) from the cursor's `startTime` yields new and changed articles
 *    with their bodies, 1,000 a page. Its `start_time` is inclusive and pages overlap on their boundary
 *    second, so an article can come twice: one already yielded in this pass, or held with the same change
 *    token, is skipped. Drafts are not items: a held one (or one yielded earlier in the pass) is deleted.
 *    A checkpoint after each page saves its `end_time`, where the next sync starts.
 * 3. The export does not report archived or deleted articles (§6 documents no such marker; archived
 *    articles simply stop appearing), so only listing every article (100 a request, the cursor-paginated
 *    list, which leaves archived ones out) proves what left: the listing deletes the held ones it did not
 *    show, or showed as drafts. It also compares every article's change token with the held one, so what
 *    the export did not surface (a renamed section or category, more same-second changes than one export
 *    page holds) is yielded from it too. A first pass has nothing to delete and skips it; a reset leaves
 *    removal to the runner's sweep.
 * 4. That listing costs a request per 100 articles, ten times the export's, so an incremental pass lists
 *    only when something says it must ({@link listingReason}): the list's article count (one request)
 *    differs from the last pass's count plus the articles the export shows created since (an archive or
 *    a deletion lowers it; nothing else does unnoticed), a category or section changed, the export could
 *    not page past a second, or the last listing is older than `KB_SUPPORT_DESK_LISTING_HOURS` (default
 *    24): the backstop for what a count cannot see, an archive and a restore in one interval.
 *
 * Tickets (opt-in): the cursor-based incremental ticket export (§5.1) from the saved `after_cursor`.
 * Solved and closed tickets whose `updated_at` differs from the held version get their comments read
 * (a few tickets in flight) and become private items of their public comments only. A ticket that is
 * deleted (`status: "deleted"`) or reopened (any other status) leaves.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isAppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment } from '../base-url.ts';
import { sourceName } from '../credential-check.ts';
import { isSourceHttpError, isTransientSourceError } from '../http.ts';
import { mapInOrder } from '../toolkit/in-order.ts';
import { knownById } from '../toolkit/known.ts';
import type { ConnectorContext, KnownDocument, SourceDocument, SyncEvent, SyncOptions } from '../types.ts';
import {
  ARTICLE_EXPORT_PAGE_SIZE,
  countArticles,
  exportArticles,
  exportTickets,
  listArticles,
  listCategories,
  listSections,
  SUPPORT_DESK_SOURCE,
  type SupportDeskCredentials,
  type TicketExportFrom,
  ticketComments,
} from './client.ts';
import { renderArticle, renderTicket, ticketTitle } from './render.ts';
import {
  type Article,
  articleSchema,
  type Category,
  type Section,
  type Ticket,
  ticketSchema,
} from './schemas.ts';

export const ARTICLES_TABLE = 'support_desk_articles';
export const TICKETS_TABLE = 'support_desk_tickets';

/**
 * The checkpoint: where each export goes on. `articles.startTime` is the last export page's `end_time`
 * (epoch seconds; that second is read again). `tickets` is the ticket export's last `after_cursor`
 * (a start time is read as well, for a pass that should begin at one); absent until a pass with tickets
 * has read a page, or while a ticket that failed for a passing reason keeps it before that page.
 */
export const supportDeskCursorSchema = z.object({
  articles: z.object({
    startTime: z.number().int().nonnegative(),
    /**
     * What the last pass saw, for the next one's {@link listingReason}: the list's article count (taken
     * before that pass's export), a digest of the categories and sections, and when every article was
     * last listed (epoch ms). Absent in cursors saved before it existed: the next pass then lists.
     */
    seen: z
      .object({
        count: z.number().int().nonnegative(),
        places: z.string(),
        listedAt: z.number().int().nonnegative(),
        /** An article failed in that pass: the next one lists, to read it again. */
        failed: z.boolean().optional(),
      })
      .optional(),
  }),
  tickets: z
    .union([z.object({ cursor: z.string().min(1) }), z.object({ startTime: z.number().int().nonnegative() })])
    .optional(),
});
export type SupportDeskCursor = z.infer<typeof supportDeskCursorSchema>;

/**
 * Where a first pass (and a reset) starts both exports: the beginning. (Zendesk has been reported to
 * answer 502 to a start time older than the account's Help Center; the client retries that, and a
 * source that keeps failing fails the job, saying so.)
 */
const FROM_THE_START = 0;
/** Ticket comment requests in flight at once: enough to hide latency, few enough for the rate limit. */
const FETCH_CONCURRENCY = 4;
/** Ticket reads failing in a row for transient reasons (after the client's retries) mean Zendesk is down. */
const MAX_TRANSIENT_IN_A_ROW = 10;

/** What this pass did with an id, beside the change token of a document it yielded. */
const DRAFT = '\u0000draft';
const GONE = '\u0000gone';
const FAILED = '\u0000failed';
const isToken = (v: string | undefined): v is string => v !== undefined && !v.startsWith('\u0000');

type Event = SyncEvent<SupportDeskCursor>;

/** Where this pass has got to: what its next checkpoint saves. */
interface PassProgress {
  articlesAt: number;
  // Saved only once this pass's count is complete: a pass that stops midway (a crash, a cancel) leaves
  // checkpoints without it, so the pass that resumes it cannot trust a count and lists.
  seen: NonNullable<SupportDeskCursor['articles']['seen']> | undefined;
  ticketsFrom: TicketExportFrom | undefined;
}

function checkpointOf(progress: PassProgress): Event {
  const { articlesAt, seen, ticketsFrom } = progress;
  return {
    kind: 'checkpoint',
    cursor: {
      articles: { startTime: articlesAt, ...(seen ? { seen } : {}) },
      ...(ticketsFrom ? { tickets: ticketsFrom } : {}),
    },
  };
}

export async function* syncSupportDesk(
  ctx: ConnectorContext<SupportDeskCredentials>,
  opts: SyncOptions<SupportDeskCursor>,
): AsyncGenerator<Event> {
  const full = opts.mode === 'full';
  const withTickets = ctx.credentials.include_tickets === true;
  const startedAt = opts.cursor?.articles.startTime ?? FROM_THE_START;
  const before = full ? undefined : opts.cursor?.articles.seen;
  const progress: PassProgress = {
    articlesAt: startedAt,
    seen: undefined,
    ticketsFrom: withTickets ? opts.cursor?.tickets : undefined,
  };

  const pass: ArticlePass = {
    known: full ? undefined : await knownById(opts.known, ctx.signal, ARTICLES_TABLE),
    places: placesOf(await listCategories(ctx), await listSections(ctx)),
    handled: new Map(),
    unidentifiedFailure: false,
  };
  // Counted before the export, so an article archived while the export runs lowers the next pass's count.
  const count = await countArticles(ctx);
  const { exportStuck, created } = yield* exportPass(ctx, pass, progress, startedAt);

  const now = Date.now();
  const places = placesDigest(pass.places);
  const reason =
    (pass.known && pass.known.size > 0) || exportStuck
      ? listingReason({
          before,
          count,
          created: created?.size,
          places,
          exportStuck,
          now,
          maxAgeMs: Number(ctx.settings['listingHours'] ?? DEFAULT_LISTING_HOURS) * HOUR_MS,
        })
      : undefined;
  if (reason) {
    // Why a sync costs a request per 100 articles this time: an operator's first question.
    ctx.log.info({ reason }, 'listing every Zendesk article');
    yield* listingPass(ctx, pass);
  }
  // A first pass read every article through the export: as complete as a listing.
  const failed = [...pass.handled.values()].includes(FAILED) || pass.unidentifiedFailure;
  progress.seen = {
    count,
    places,
    listedAt: reason || !before ? now : before.listedAt,
    ...(failed ? { failed } : {}),
  };

  if (withTickets) {
    const tickets: TicketPass = {
      known: full ? undefined : await knownById(opts.known, ctx.signal, TICKETS_TABLE),
      handled: new Map(),
    };
    yield* ticketExportPass(ctx, tickets, progress);
  }
  yield checkpointOf(progress);
}

// ---------------------------------------------------------------------------------------------------
// Articles
// ---------------------------------------------------------------------------------------------------

/** The default of `KB_SUPPORT_DESK_LISTING_HOURS`: the longest an incremental pass goes without a listing. */
export const DEFAULT_LISTING_HOURS = '24';
const HOUR_MS = 3_600_000;

/** What decides whether an incremental pass lists every article. */
interface ListingInputs {
  /** What the last pass saw; undefined after a reset or with a cursor older than the count. */
  before: { count: number; places: string; listedAt: number; failed?: boolean | undefined } | undefined;
  /** The list's article count now, taken before this pass's export. */
  count: number;
  /** Distinct articles the export showed created after its start time; undefined: not readable. */
  created: number | undefined;
  places: string;
  exportStuck: boolean;
  now: number;
  maxAgeMs: number;
}

/**
 * Why this incremental pass must list every article, or undefined when the cheap signals prove it need
 * not. The count is the proof of "nothing left": the list counts every article not archived or deleted,
 * and between two passes it grows only by the articles created since, which the export shows (it shows
 * every change after its start time). Any other difference, an archive or a deletion above all, lists.
 * Races in the other direction (an article created after the count but before the export read it) make
 * the sum too large: a listing that was not needed, never a deletion missed.
 */
function listingReason(i: ListingInputs): string | undefined {
  if (i.exportStuck) return 'the export could not page past one second';
  if (!i.before) return 'no count from an earlier pass';
  if (i.before.failed) return 'an article failed in the last pass';
  if (i.places !== i.before.places) return 'a category or section changed';
  if (i.created === undefined) return 'an exported article had no readable creation time';
  if (i.count !== i.before.count + i.created) {
    return `the list counts ${i.count} articles, the last pass ${i.before.count} and the export ${i.created} new`;
  }
  if (i.now - i.before.listedAt >= i.maxAgeMs) return 'the last listing is older than the listing interval';
  return undefined;
}

/** Adds an exported article created after `startTime` (epoch seconds) to `created`. */
function noteCreated(
  created: Set<string> | undefined,
  raw: unknown,
  startTime: number,
): Set<string> | undefined {
  if (!created) return undefined;
  const id = idOf(raw);
  const at =
    raw && typeof raw === 'object' && typeof (raw as { created_at?: unknown }).created_at === 'string'
      ? Date.parse((raw as { created_at: string }).created_at)
      : Number.NaN;
  if (id === undefined || Number.isNaN(at)) return undefined;
  if (Math.floor(at / 1000) > startTime) created.add(id);
  return created;
}

/** A digest of every section's place (its category and section names), in section order. */
function placesDigest(places: Map<number, string[]>): string {
  const hash = createHash('sha256');
  for (const [id, names] of [...places].sort(([a], [b]) => a - b))
    hash.update(`${id}\u0001${names.join('\u0000')}\u0002`);
  return hash.digest('hex').slice(0, 16);
}

/** What the article export showed beyond its articles, for {@link listingReason}. */
interface ExportOutcome {
  // More articles changed in one second than an export page holds: the export cannot page past that
  // second, so only the listing can show the rest.
  exportStuck: boolean;
  // Articles the export shows created since it started (drafts too: the list counts them); undefined
  // once one's creation time cannot be read (the count then proves nothing).
  created: Set<string> | undefined;
}

/** The incremental article export from `progress.articlesAt`, with a checkpoint after each page. */
async function* exportPass(
  ctx: ConnectorContext<SupportDeskCredentials>,
  pass: ArticlePass,
  progress: PassProgress,
  startedAt: number,
): AsyncGenerator<Event, ExportOutcome> {
  const outcome: ExportOutcome = { exportStuck: false, created: new Set() };
  for await (const step of exportArticles(ctx, progress.articlesAt)) {
    for (const raw of step.page.articles) {
      outcome.created = noteCreated(outcome.created, raw, startedAt);
      yield* articleEvents(pass, raw);
    }
    progress.articlesAt = step.endTime;
    if (step.page.articles.length >= ARTICLE_EXPORT_PAGE_SIZE && step.endTime === step.requested) {
      outcome.exportStuck = true;
    }
    yield checkpointOf(progress);
  }
  return outcome;
}

interface ArticlePass {
  /** Held articles by id; undefined in a reset (everything is read again). */
  known: Map<string, KnownDocument> | undefined;
  /** Section id → category, parent sections and section names, outermost first. */
  places: Map<number, string[]>;
  /** What this pass did with each article id: the change token it yielded, DRAFT or FAILED. */
  handled: Map<string, string>;
  /** An article without a readable id failed (it is in no `handled` entry). */
  unidentifiedFailure: boolean;
}

/** Each section's place: its category's name, then its parent sections' and its own. */
function placesOf(categories: readonly Category[], sections: readonly Section[]): Map<number, string[]> {
  const categoryNames = new Map(categories.map((c) => [c.id, c.name]));
  const byId = new Map(sections.map((s) => [s.id, s]));
  const out = new Map<number, string[]>();
  for (const section of sections) {
    const chain: string[] = [];
    const seen = new Set<number>();
    let top = section;
    for (let s: Section | undefined = section; s && !seen.has(s.id); ) {
      seen.add(s.id);
      chain.unshift(s.name);
      top = s;
      s = s.parent_section_id == null ? undefined : byId.get(s.parent_section_id);
    }
    const categoryId = section.category_id ?? top.category_id;
    const category = categoryId == null ? undefined : categoryNames.get(categoryId);
    out.set(section.id, category === undefined ? chain : [category, ...chain]);
  }
  return out;
}

function placeOf(pass: ArticlePass, a: Article): string[] {
  return a.section_id == null ? [] : (pass.places.get(a.section_id) ?? []);
}

/**
 * `updated_at` (every change of the article, its metadata included: section, labels, visibility; a
 * better token than `edited_at`, which only moves with title and body) plus a digest of the names above
 * it, which change without the article changing.
 */
function articleToken(a: Article, place: readonly string[]): string {
  const digest = createHash('sha256').update(place.join('\u0000')).digest('hex').slice(0, 12);
  return `${a.updated_at}|${digest}`;
}

/** What one export or listing record means for the connection. */
function articleEvents(pass: ArticlePass, raw: unknown): Event[] {
  const parsed = articleSchema.safeParse(raw);
  if (!parsed.success) {
    const id = idOf(raw);
    if (id !== undefined) {
      if (pass.handled.get(id) === FAILED) return [];
      pass.handled.set(id, FAILED);
    } else {
      pass.unidentifiedFailure = true;
    }
    return [
      {
        kind: 'failure',
        ...(id === undefined ? {} : { externalId: id, table: ARTICLES_TABLE }),
        error: new Error(
          `${sourceName(SUPPORT_DESK_SOURCE)} answered an article${id === undefined ? '' : ` (${id})`} in an unexpected shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`,
        ),
        retryable: false,
      },
    ];
  }
  const a = parsed.data;
  const id = String(a.id);
  const prev = pass.handled.get(id);
  if (a.draft) {
    if (prev === DRAFT) return [];
    pass.handled.set(id, DRAFT);
    // Yielded earlier in this pass (published then, a draft now), or held from an earlier one.
    const held = isToken(prev) || (pass.known?.has(id) ?? false);
    return held ? [{ kind: 'deleted', externalId: id, table: ARTICLES_TABLE }] : [];
  }
  const place = placeOf(pass, a);
  const token = articleToken(a, place);
  if (prev === token) return [];
  if (prev === undefined && pass.known?.get(id)?.version === token) {
    pass.handled.set(id, token);
    return [];
  }
  let markdown: string;
  try {
    markdown = renderArticle(a, place);
  } catch (err) {
    pass.handled.set(id, FAILED);
    return [
      {
        kind: 'failure',
        externalId: id,
        table: ARTICLES_TABLE,
        error: new Error(
          `${sourceName(SUPPORT_DESK_SOURCE)} article ${id} (${JSON.stringify(a.title)}) could not be converted: ${err instanceof Error ? err.message : String(err)}`,
        ),
        retryable: false,
      },
    ];
  }
  pass.handled.set(id, token);
  return [{ kind: 'document', doc: articleDocument(a, place, token, markdown) }];
}

function articleDocument(
  a: Article,
  place: readonly string[],
  token: string,
  markdown: string,
): SourceDocument {
  const everyone = a.user_segment_id == null && (a.user_segment_ids ?? []).length === 0;
  const tags = ['support_desk', ...place, ...(a.label_names ?? [])]
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return {
    externalId: String(a.id),
    title: a.title,
    url: a.html_url,
    markdown,
    updatedAt: a.updated_at,
    visibility: everyone ? 'public' : 'private',
    tags: [...new Set(tags)],
    table: ARTICLES_TABLE,
    version: token,
  };
}

/**
 * Every article the listing shows: held ones it does not show (archived, deleted) or shows as drafts
 * leave, once the listing completed; ones whose change token differs from what is held are yielded.
 */
async function* listingPass(
  ctx: ConnectorContext<SupportDeskCredentials>,
  pass: ArticlePass,
): AsyncGenerator<Event> {
  const present = new Set<string>();
  // False when a listed record had no readable id: the listing cannot tell what is gone then.
  let complete = true;
  for await (const page of listArticles(ctx)) {
    for (const raw of page.articles) {
      const id = idOf(raw);
      if (id === undefined) complete = false;
      else if (!isDraft(raw)) present.add(id);
      yield* articleEvents(pass, raw);
    }
  }
  if (!complete) return;
  for (const id of pass.known?.keys() ?? []) {
    ctx.signal.throwIfAborted();
    if (!present.has(id) && pass.handled.get(id) !== DRAFT) {
      yield { kind: 'deleted', externalId: id, table: ARTICLES_TABLE };
    }
  }
  // Yielded by the export moments ago, archived since.
  for (const [id, done] of pass.handled) {
    ctx.signal.throwIfAborted();
    if (isToken(done) && !present.has(id) && !pass.known?.has(id)) {
      yield { kind: 'deleted', externalId: id, table: ARTICLES_TABLE };
    }
  }
}

function idOf(raw: unknown): string | undefined {
  if (raw && typeof raw === 'object' && 'id' in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
    if (typeof id === 'string' && /^\d+$/.test(id)) return id;
  }
  return undefined;
}

function isDraft(raw: unknown): boolean {
  return Boolean(raw && typeof raw === 'object' && (raw as { draft?: unknown }).draft === true);
}

// ---------------------------------------------------------------------------------------------------
// Tickets
// ---------------------------------------------------------------------------------------------------

interface TicketPass {
  known: Map<string, KnownDocument> | undefined;
  /** What this pass did with each ticket id: the version it queued, GONE or FAILED. */
  handled: Map<string, string>;
}

/**
 * The ticket export from the saved position: new and changed solved or closed tickets are read and
 * yielded a page at a time, with a checkpoint after each page.
 */
async function* ticketExportPass(
  ctx: ConnectorContext<SupportDeskCredentials>,
  tickets: TicketPass,
  progress: PassProgress,
): AsyncGenerator<Event> {
  // After a ticket that failed for a passing reason, the saved cursor stays before its page, so the
  // next sync reads that page again (its unchanged tickets are skipped by version) instead of losing it.
  let holdCursor = false;
  let transientInARow = 0;
  for await (const page of exportTickets(ctx, progress.ticketsFrom ?? { startTime: FROM_THE_START })) {
    const todo: Ticket[] = [];
    for (const raw of page.tickets) yield* ticketEvents(tickets, raw, todo);
    let retryLater = false;
    for await (const [, outcome] of mapInOrder(todo, FETCH_CONCURRENCY, (t) => ticketDocument(ctx, t))) {
      if (outcome.kind === 'failure' && outcome.externalId !== undefined) {
        tickets.handled.set(outcome.externalId, FAILED);
      }
      yield outcome;
      const transient = outcome.kind === 'failure' && outcome.retryable;
      if (transient) {
        retryLater = true;
        if (++transientInARow >= MAX_TRANSIENT_IN_A_ROW) {
          throw new Error(
            `${sourceName(SUPPORT_DESK_SOURCE)} failed ${transientInARow} ticket reads in a row; last: ${outcome.error.message}`,
          );
        }
      } else {
        transientInARow = 0;
      }
    }
    if (retryLater) holdCursor = true;
    if (!holdCursor && page.after_cursor) progress.ticketsFrom = { cursor: page.after_cursor };
    yield checkpointOf(progress);
  }
}

const ITEM_STATUSES = new Set(['solved', 'closed']);

/**
 * One exported ticket: a solved or closed one that is new or changed joins `todo` (its comments are read
 * next); any other status means it is no longer an item (deleted, or reopened).
 */
function ticketEvents(pass: TicketPass, raw: unknown, todo: Ticket[]): Event[] {
  const parsed = ticketSchema.safeParse(raw);
  if (!parsed.success) {
    const id = idOf(raw);
    if (id !== undefined) pass.handled.set(id, FAILED);
    return [
      {
        kind: 'failure',
        ...(id === undefined ? {} : { externalId: id, table: TICKETS_TABLE }),
        error: new Error(
          `${sourceName(SUPPORT_DESK_SOURCE)} exported a ticket${id === undefined ? '' : ` (${id})`} in an unexpected shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`,
        ),
        retryable: false,
      },
    ];
  }
  const t = parsed.data;
  const id = String(t.id);
  const prev = pass.handled.get(id);
  if (!ITEM_STATUSES.has(t.status)) {
    if (prev === GONE) return [];
    pass.handled.set(id, GONE);
    const held = isToken(prev) || (pass.known?.has(id) ?? false);
    return held ? [{ kind: 'deleted', externalId: id, table: TICKETS_TABLE }] : [];
  }
  const version = t.updated_at;
  if (prev === version) return [];
  pass.handled.set(id, version);
  if (prev === undefined && pass.known?.get(id)?.version === version) return [];
  todo.push(t);
  return [];
}

/**
 * A ticket's document, from its comments. Problems of this ticket alone become its failure; refused
 * credentials and cancellation end the sync.
 */
async function ticketDocument(
  ctx: ConnectorContext<SupportDeskCredentials>,
  t: Ticket,
): Promise<Extract<Event, { kind: 'document' | 'failure' }>> {
  const id = String(t.id);
  const fail = (
    message: string,
    { retryable }: { retryable: boolean },
  ): Extract<Event, { kind: 'failure' }> => ({
    kind: 'failure',
    externalId: id,
    table: TICKETS_TABLE,
    error: new Error(`${sourceName(SUPPORT_DESK_SOURCE)} ticket ${id} ${message}`),
    retryable,
  });
  let got: Awaited<ReturnType<typeof ticketComments>>;
  try {
    got = await ticketComments(ctx, id);
  } catch (err) {
    if (ctx.signal.aborted || isAppError(err) || !isSourceHttpError(err)) throw err;
    if (err.status === 404) {
      // Exported as solved moments ago, so most likely deleted since; the export says so next time.
      return fail('was exported but its comments answer 404 (deleted since?)', { retryable: false });
    }
    return fail(`could not be read: ${err.message}`, { retryable: isTransientSourceError(err) });
  }
  const url = joinUrl(ctx.baseUrl, `/agent/tickets/${pathSegment(id)}`);
  let markdown: string;
  try {
    markdown = renderTicket(t, got.comments, got.userNames, url);
  } catch (err) {
    return fail(`could not be converted: ${err instanceof Error ? err.message : String(err)}`, {
      retryable: false,
    });
  }
  const tags = ['support_desk', 'ticket', ...(t.tags ?? [])].map((s) => s.trim()).filter((s) => s !== '');
  return {
    kind: 'document',
    doc: {
      externalId: id,
      title: ticketTitle(t),
      url,
      markdown,
      updatedAt: t.updated_at,
      visibility: 'private',
      tags: [...new Set(tags)],
      table: TICKETS_TABLE,
      version: t.updated_at,
    },
  };
}
