/**
 * The content sync of `support_desk` (Zendesk): Help Center articles in every language of every help
 * center the connection asks for (its subdomain's own, or its brands': brands.ts), and, when the
 * connection asks for them (`include_tickets`), solved and closed tickets with their public comments.
 *
 * Articles, per help center:
 * 1. The help center's structure: categories and sections (the tags and the `Category > Section` context
 *    of every article, in the default language, and part of its change token: a renamed section changes
 *    its articles' text and tags) and its languages. An incremental pass reads it only when a signal says
 *    it may have moved, else uses the last pass's (structure.ts). The article count (one request) and each
 *    language other than the default (one probe each: translations.ts) are asked every pass.
 * 2. The incremental article export (§4.3) from the help center's `startTime` yields new and changed
 *    articles in the default language, with their bodies, 1,000 a page. It is not asked when the count's
 *    request (which also names the most recently updated article) proves it has nothing new
 *    ({@link exportNeedless}): an unchanged help center costs one request for its default language.
 *    Its `start_time` is inclusive and pages overlap on their boundary second, so an article can come
 *    twice: one already yielded in this pass, or held with the same change token, is skipped. Drafts are
 *    not items: a held one (or one yielded earlier in the pass) is deleted. A checkpoint after each page
 *    saves its `end_time`, where the next sync starts.
 * 3. The export does not report archived or deleted articles (§6 documents no such marker; archived
 *    articles simply stop appearing), so only listing every article (100 a request, the cursor-paginated
 *    list, which leaves archived ones out) proves what left: the listing deletes the held ones it did not
 *    show, or showed as drafts, and the translations of those it did not show at all. It also compares
 *    every article's change token with the held one, so what the export did not surface (a renamed
 *    section or category, more same-second changes than one export page holds) is yielded from it too. A
 *    first pass has nothing to delete and skips it; a reset leaves removal to the runner's sweep.
 * 4. That listing costs a request per 100 articles, ten times the export's, so an incremental pass lists
 *    only when something says it must ({@link listingReason}): the list's article count (one request)
 *    differs from the last pass's count plus the articles the export shows created since (an archive or
 *    a deletion lowers it; nothing else does unnoticed), a category or section changed (seen when the
 *    structure is read), the default language changed, the export could not page past a second, or the last listing is older than
 *    `KB_SUPPORT_DESK_LISTING_HOURS` (default 24): the backstop for what a count cannot see, an archive and
 *    a restore in one interval.
 * 5. The other languages (translations.ts): each translation an item `{id}:{locale}`.
 * Held items of a language the help center no longer has, or of a help center the pass no longer reads
 * (a brand removed from the option, its help center disabled), leave. Which help centers a pass reads is
 * the brand list's answer, remembered between passes (brands.ts).
 *
 * Tickets (opt-in): the cursor-based incremental ticket export (§5.1) from the saved `after_cursor`.
 * Solved and closed tickets whose `updated_at` differs from the held version get their comments read
 * (a few tickets in flight) and become private items of their public comments only. A ticket that is
 * deleted (`status: "deleted"`) or reopened (any other status) leaves.
 */
import { z } from 'zod';
import { isAppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment } from '../base-url.ts';
import { sourceName } from '../credential-check.ts';
import { isSourceHttpError, isTransientSourceError } from '../http.ts';
import { mapInOrder } from '../toolkit/in-order.ts';
import { knownById } from '../toolkit/known.ts';
import { FailureRun, listingPass as listingPassOf } from '../toolkit/listing-pass.ts';
import type { ConnectorContext, KnownDocument, SyncEvent, SyncOptions } from '../types.ts';
import {
  ARTICLES_TABLE,
  type ArticlePass,
  articleEvents,
  ARTICLE_FAILURES,
  articleKey,
  articleListing,
  articleToken,
  DRAFT,
  FAILED,
  GONE,
  idOf,
  isToken,
  parseArticleKey,
  yieldedThisPass,
} from './articles.ts';
import {
  type HelpCenter,
  type HelpCenters,
  helpCenters,
  type RememberedBrands,
  rememberedHelpCenters,
} from './brands.ts';
import {
  ARTICLE_EXPORT_PAGE_SIZE,
  type ArticlesProbe,
  exportArticles,
  exportTickets,
  type LocaleProbe,
  listArticles,
  probeArticles,
  SUPPORT_DESK_SOURCE,
  type SupportDeskCredentials,
  type TicketExportFrom,
  ticketComments,
} from './client.ts';
import { renderTicket, ticketTitle } from './render.ts';
import { type Article, articleSchema, type Ticket, ticketSchema } from './schemas.ts';
import { HelpCenterStructure, probeLanguages } from './structure.ts';
import { type LocaleSeen, translationPass } from './translations.ts';

export { ARTICLES_TABLE };
export const TICKETS_TABLE = 'support_desk_tickets';

const localeSeenSchema = z.object({
  count: z.number().int().nonnegative(),
  /** `edited_at|id` of the language's most recently edited article. */
  newest: z.string().optional(),
  listedAt: z.number().int().nonnegative(),
  failed: z.boolean().optional(),
});

/** Where one help center's export goes on, and what its last complete pass saw. */
const helpCenterCursorSchema = z.object({
  startTime: z.number().int().nonnegative(),
  /**
   * What the last pass saw, for the next one's {@link listingReason}: the list's article count (taken
   * before that pass's export), a digest of the categories and sections, when every article was last
   * listed (epoch ms), and the languages. Absent in cursors saved before it existed: the next pass lists.
   */
  seen: z
    .object({
      count: z.number().int().nonnegative(),
      /** `updated_at|id` of the newest article the count's request showed; absent: the export runs. */
      newest: z.string().optional(),
      /** When that pass began (epoch ms), before its first request. */
      probedAt: z.number().int().nonnegative().optional(),
      places: z.string(),
      /** When the categories, sections and languages were last read (structure.ts); absent: read next. */
      structureAt: z.number().int().nonnegative().optional(),
      listedAt: z.number().int().nonnegative(),
      /** An article failed in that pass: the next one lists, to read it again. */
      failed: z.boolean().optional(),
      /** The default language and what each other one showed. Absent before languages were synced. */
      locales: z.object({ default: z.string(), others: z.record(z.string(), localeSeenSchema) }).optional(),
    })
    .optional(),
});
type HelpCenterCursor = z.infer<typeof helpCenterCursorSchema>;

/**
 * The checkpoint: where each export goes on. `articles` is the connection's own help center, `brands`
 * the other brands' by subdomain; each `startTime` is the last export page's `end_time` (epoch seconds;
 * that second is read again). `tickets` is the ticket export's last `after_cursor` (a start time is read
 * as well, for a pass that should begin at one); absent until a pass with tickets has read a page, or
 * while a ticket that failed for a passing reason keeps it before that page.
 */
export const supportDeskCursorSchema = z.object({
  articles: helpCenterCursorSchema,
  brands: z.record(z.string(), helpCenterCursorSchema).optional(),
  tickets: z
    .union([z.object({ cursor: z.string().min(1) }), z.object({ startTime: z.number().int().nonnegative() })])
    .optional(),
  /** The help centers the last read of the brand list found (brands.ts); absent: the next pass reads it. */
  brandList: z
    .object({
      wanted: z.string(),
      readAt: z.number().int().nonnegative(),
      subdomains: z.array(z.string()),
    })
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
/**
 * Changed articles whose translations a pass reads one by one, at most: beyond, listing every language
 * whole is cheaper, and the records are not held in memory.
 */
const MAX_CHANGED_HELD = 1000;

type Event = SyncEvent<SupportDeskCursor>;

/** Where this pass has got to: what its next checkpoint saves. */
interface PassProgress {
  /**
   * Each help center's state by key prefix (`''`: the connection's own). Its `seen` is saved only once
   * its pass completes: a pass that stops midway leaves checkpoints without it, so the pass that resumes
   * it cannot trust a count and lists.
   */
  centers: Map<string, HelpCenterCursor>;
  ticketsFrom: TicketExportFrom | undefined;
  /** The help centers the brand list named, for the next pass; undefined: it reads the list. */
  brandList: RememberedBrands | undefined;
}

function checkpointOf(progress: PassProgress): Event {
  const brands: Record<string, HelpCenterCursor> = {};
  // Copies: the pass goes on changing its states after the checkpoint is handed over.
  for (const [prefix, state] of progress.centers) {
    if (prefix !== '') brands[prefix.slice(0, -1)] = { ...state };
  }
  const own = progress.centers.get('');
  return {
    kind: 'checkpoint',
    cursor: {
      articles: own ? { ...own } : { startTime: FROM_THE_START },
      ...(Object.keys(brands).length > 0 ? { brands } : {}),
      ...(progress.ticketsFrom ? { tickets: progress.ticketsFrom } : {}),
      ...(progress.brandList ? { brandList: progress.brandList } : {}),
    },
  };
}

/** Held articles by help center prefix, then language (`''`: the default), then key. */
type HeldArticles = Map<string, Map<string, Map<string, KnownDocument>>>;

function partition(known: Map<string, KnownDocument>): HeldArticles {
  const out: HeldArticles = new Map();
  for (const [key, doc] of known) {
    const parsed = parseArticleKey(key);
    if (!parsed) continue;
    const byLocale = out.get(parsed.prefix) ?? new Map<string, Map<string, KnownDocument>>();
    out.set(parsed.prefix, byLocale);
    const locale = parsed.locale ?? '';
    const docs = byLocale.get(locale) ?? new Map<string, KnownDocument>();
    byLocale.set(locale, docs);
    docs.set(key, doc);
  }
  return out;
}

/** What every help center's pass shares. */
interface Run {
  full: boolean;
  /** Held articles; undefined in a reset. */
  held: HeldArticles | undefined;
  progress: PassProgress;
  now: number;
  maxAgeMs: number;
}

export async function* syncSupportDesk(
  ctx: ConnectorContext<SupportDeskCredentials>,
  opts: SyncOptions<SupportDeskCursor>,
): AsyncGenerator<Event> {
  const full = opts.mode === 'full';
  const withTickets = ctx.credentials.include_tickets === true;
  const now = Date.now();
  const maxAgeMs = Number(ctx.settings['listingHours'] ?? DEFAULT_LISTING_HOURS) * HOUR_MS;
  const remembered = full ? undefined : rememberedHelpCenters(ctx, opts.cursor?.brandList, { now, maxAgeMs });
  const found = remembered ?? (yield* helpCenters(ctx, { now }));
  const progress: PassProgress = {
    centers: new Map(found.centers.map((hc) => [hc.prefix, startState(opts.cursor, hc)])),
    ticketsFrom: withTickets ? opts.cursor?.tickets : undefined,
    brandList: found.remember,
  };
  const run: Run = {
    full,
    held: full ? undefined : partition(await knownById(opts.known, ctx.signal, ARTICLES_TABLE)),
    progress,
    now,
    maxAgeMs,
  };
  const { centers, keep } = yield* helpCenterPasses(ctx, run, {
    found,
    remembered: remembered !== undefined,
    cursor: opts.cursor,
  });
  if (run.held) {
    // Help centers this pass no longer reads: a brand left the option, or its help center went dark.
    const read = new Set([...centers, ...keep]);
    for (const [prefix, byLocale] of run.held) {
      if (!read.has(prefix)) yield* deleteAll(ctx, byLocale.values());
    }
  }

  if (withTickets) {
    const tickets: TicketPass = {
      known: full ? undefined : await knownById(opts.known, ctx.signal, TICKETS_TABLE),
      handled: new Map(),
    };
    yield* ticketExportPass(ctx, tickets, progress);
  }
  yield checkpointOf(progress);
}

/** A help center's state at the start of this pass: a copy of the saved one (the pass changes it). */
function startState(cursor: SupportDeskCursor | null, hc: HelpCenter): HelpCenterCursor {
  const saved = hc.prefix === '' ? cursor?.articles : cursor?.brands?.[hc.subdomain];
  return saved ? { ...saved } : { startTime: FROM_THE_START };
}

/**
 * Every help center's pass. When the help centers are the ones a past pass remembered (brands.ts), one
 * that answers 404 before yielding anything (disabled or deleted since) has the brand list read again,
 * and the pass goes on with the help centers it names that are not done yet. Answers the prefixes read
 * and those whose items stay.
 */
async function* helpCenterPasses(
  ctx: ConnectorContext<SupportDeskCredentials>,
  run: Run,
  opts: { found: HelpCenters; remembered: boolean; cursor: SupportDeskCursor | null },
): AsyncGenerator<Event, { centers: Set<string>; keep: Set<string> }> {
  let { found, remembered } = opts;
  const done = new Set<string>();
  for (;;) {
    let gone: HelpCenter | undefined;
    for (const hc of found.centers.filter((c) => !done.has(c.prefix))) {
      let yielded = false;
      try {
        for await (const event of helpCenterPass(ctx, hc, run)) {
          yielded = true;
          yield event;
        }
      } catch (err) {
        if (!remembered || yielded || !isSourceHttpError(err) || err.status !== 404) throw err;
        gone = hc;
        break;
      }
      done.add(hc.prefix);
    }
    if (!gone) {
      return { centers: new Set([...done, ...found.centers.map((c) => c.prefix)]), keep: found.keep };
    }
    ctx.log.info(
      { help_center: gone.subdomain },
      'a remembered Zendesk help center answers 404: reading the brands',
    );
    remembered = false;
    found = yield* helpCenters(ctx, { now: run.now });
    run.progress.brandList = found.remember;
    const centers = run.progress.centers;
    for (const prefix of [...centers.keys()]) {
      if (!done.has(prefix)) centers.delete(prefix);
    }
    for (const hc of found.centers) {
      if (!done.has(hc.prefix)) centers.set(hc.prefix, startState(opts.cursor, hc));
    }
  }
}

function* deleteAll(
  ctx: ConnectorContext<SupportDeskCredentials>,
  groups: Iterable<Map<string, KnownDocument>>,
): Generator<Event> {
  for (const docs of groups) {
    for (const key of docs.keys()) {
      ctx.signal.throwIfAborted();
      yield { kind: 'deleted', externalId: key, table: ARTICLES_TABLE };
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Articles
// ---------------------------------------------------------------------------------------------------

/** The default of `KB_SUPPORT_DESK_LISTING_HOURS`: the longest an incremental pass goes without a listing. */
export const DEFAULT_LISTING_HOURS = '24';
const HOUR_MS = 3_600_000;

/** One help center: its default language through the export, then its other languages. */
async function* helpCenterPass(
  base: ConnectorContext<SupportDeskCredentials>,
  hc: HelpCenter,
  run: Run,
): AsyncGenerator<Event> {
  const ctx = { ...base, baseUrl: hc.baseUrl };
  const state = run.progress.centers.get(hc.prefix)!;
  const before = run.full ? undefined : state.seen;
  state.seen = undefined;
  const startedAt = state.startTime;
  const held = run.held?.get(hc.prefix);
  const first = !held || [...held.values()].every((docs) => docs.size === 0);
  const structure = new HelpCenterStructure({
    ctx,
    subdomain: hc.subdomain,
    now: run.now,
    remembered: before,
  });
  const upfront = first ? 'a first pass' : structureReason(before, run);
  if (upfront) await structure.read(upfront);
  // Counted before the export, so an article archived while the export runs lowers the next pass's count.
  const probe = await probeArticles(ctx);
  const count = probe.count;
  if (count !== before?.count) await structure.read('the article count changed');
  const probes = new Map<string, LocaleProbe>();
  const beforeOthers = before?.locales?.others;
  await probeLanguages(ctx, structure, beforeOthers, probes);
  const scope = { prefix: hc.prefix, brandTag: hc.brandTag };
  const pass: ArticlePass = {
    scope: { ...scope, locale: structure.defaultLocale, isDefault: true },
    known: run.held ? (held?.get('') ?? new Map()) : undefined,
    places: structure.places,
    handled: new Map(),
    unidentifiedFailure: false,
  };
  const collect = !first && structure.others.length > 0;
  const quiet = exportNeedless(before, probe);
  const exported = quiet
    ? NOTHING_EXPORTED()
    : yield* exportPass(ctx, pass, state, startedAt, { collect, progress: run.progress, structure });

  const { reason, gone } = yield* defaultListing(ctx, {
    pass,
    structure,
    exported,
    listing: { before, count, now: run.now, maxAgeMs: run.maxAgeMs },
  });
  // Languages the structure named when read after the probes.
  await probeLanguages(ctx, structure, beforeOthers, probes);
  const others = yield* otherLanguages(ctx, {
    hc,
    run,
    structure,
    probes,
    before,
    held,
    first,
    gone,
    exported,
  });
  const failed = [...pass.handled.values()].includes(FAILED) || pass.unidentifiedFailure;
  state.seen = {
    count,
    ...(probe.newest === undefined ? {} : { newest: probe.newest }),
    // The start of the last pass whose export read up to the newest article.
    probedAt: quiet && before?.probedAt !== undefined ? before.probedAt : run.now,
    places: structure.digest,
    ...(structure.readAt === undefined ? {} : { structureAt: structure.readAt }),
    listedAt: reason || !before ? run.now : before.listedAt,
    ...(failed ? { failed } : {}),
    locales: { default: structure.defaultLocale, others },
  };
}

/**
 * How far an article's `updated_at` (Zendesk's clock) must lie before the last pass's start (ours) for
 * that pass's export to have seen every article updated in the same second: covers clock skew.
 */
const SAME_SECOND_MARGIN_MS = 5 * 60_000;

/** An export that was not asked: it would have shown nothing the last pass did not see. */
const NOTHING_EXPORTED = (): ExportOutcome => ({
  exportStuck: false,
  created: new Set(),
  changed: new Map(),
});

/**
 * Whether the probe proves the export would show nothing new, so one request is the whole default
 * language of an unchanged help center. The export shows the articles whose `updated_at` is at or after
 * its start, the last pass's newest; the probe names the newest now. The same newest and the same count
 * mean no article was created or changed after it (it would be the newest) and none archived or deleted
 * (the count would be lower; a deletion with a creation moves the newest). What could hide behind an
 * unchanged newest is an article updated later within its very second, after the last pass read it: so
 * the newest must be older than the last pass's start, with room for the clocks. Otherwise the export
 * runs, as it does without a remembered probe.
 */
function exportNeedless(before: HelpCenterCursor['seen'], probe: ArticlesProbe): boolean {
  if (!before || before.probedAt === undefined || before.count !== probe.count) return false;
  if (probe.count === 0 && probe.newest === undefined) return true;
  if (before.newest === undefined || before.newest !== probe.newest) return false;
  const updatedAt = Date.parse(probe.newest.slice(0, probe.newest.indexOf('|')));
  return Number.isFinite(updatedAt) && updatedAt < before.probedAt - SAME_SECOND_MARGIN_MS;
}

/**
 * The default language's listing, when {@link listingReason} gives one (the structure is read first, so
 * that the listing compares tokens with the current names); answers the reason and the ids it proved gone.
 */
async function* defaultListing(
  ctx: ConnectorContext<SupportDeskCredentials>,
  i: {
    pass: ArticlePass;
    structure: HelpCenterStructure;
    exported: ExportOutcome;
    listing: Pick<ListingInputs, 'before' | 'count' | 'now' | 'maxAgeMs'>;
  },
): AsyncGenerator<Event, { reason: string | undefined; gone: ReadonlySet<string> }> {
  const { pass, structure, exported } = i;
  const heldAny = pass.known !== undefined && pass.known.size > 0;
  const reasonOf = () =>
    heldAny || exported.exportStuck
      ? listingReason({
          ...i.listing,
          created: exported.created?.size,
          places: structure.digest,
          exportStuck: exported.exportStuck,
          defaultLocale: structure.defaultLocale,
        })
      : undefined;
  let reason = reasonOf();
  if (reason && !structure.isRead) {
    await readStructure(structure, pass, reason);
    reason = reasonOf();
  }
  if (!reason) return { reason, gone: new Set() };
  // Why a sync costs a request per 100 articles this time: an operator's first question.
  ctx.log.info({ reason, help_center: structure.subdomain }, 'listing every Zendesk article');
  return { reason, gone: yield* listingPass(ctx, pass) };
}

/**
 * Why this pass reads the structure before its first request, or undefined when the cheap signals
 * (the count, the probes, the export) decide. Whatever reads a whole listing reads it too, so that the
 * listing compares tokens with the current names.
 */
function structureReason(before: HelpCenterCursor['seen'], run: Run): string | undefined {
  if (!before?.locales) return 'no structure from an earlier pass';
  const due = (at: number | undefined) => at === undefined || run.now - at >= run.maxAgeMs;
  if (due(before.structureAt)) return 'the structure is older than the listing interval';
  if (before.failed) return 'an article failed in the last pass';
  if (due(before.listedAt)) return 'the last listing is older than the listing interval';
  for (const [locale, seen] of Object.entries(before.locales.others)) {
    if (seen.failed || due(seen.listedAt)) return `the language ${locale} is due a listing`;
  }
  return undefined;
}

/**
 * Reads the structure in the middle of a pass: the default language's records from here on carry the
 * language it names (a changed default lists every article, listingReason).
 */
async function readStructure(structure: HelpCenterStructure, pass: ArticlePass, reason: string) {
  await structure.read(reason);
  pass.scope = { ...pass.scope, locale: structure.defaultLocale };
}

interface OtherLanguagesInputs {
  hc: HelpCenter;
  run: Run;
  structure: HelpCenterStructure;
  probes: Map<string, LocaleProbe>;
  before: HelpCenterCursor['seen'];
  held: Map<string, Map<string, KnownDocument>> | undefined;
  first: boolean;
  gone: ReadonlySet<string>;
  exported: ExportOutcome;
}

/** The help center's other languages, and the held items of languages it no longer has (or made default). */
async function* otherLanguages(
  ctx: ConnectorContext<SupportDeskCredentials>,
  i: OtherLanguagesInputs,
): AsyncGenerator<Event, Record<string, LocaleSeen>> {
  const { structure } = i;
  const passes = new Map<string, ArticlePass>();
  for (const locale of structure.others) {
    passes.set(locale, {
      scope: { prefix: i.hc.prefix, brandTag: i.hc.brandTag, locale, isDefault: false },
      known: i.run.held ? (i.held?.get(locale) ?? new Map()) : undefined,
      places: structure.places,
      handled: new Map(),
      unidentifiedFailure: false,
    });
  }
  const beforeLocales = i.before?.locales;
  const placesChanged = i.before !== undefined && i.before.places !== structure.digest;
  const others =
    passes.size === 0
      ? {}
      : yield* translationPass(ctx, {
          passes,
          probes: i.probes,
          before: beforeLocales?.default === structure.defaultLocale ? beforeLocales.others : undefined,
          changed: i.exported.changed ?? new Map(),
          gone: i.gone,
          first: i.first,
          listAll: placesChanged || i.exported.exportStuck || i.exported.changed === undefined,
          now: i.run.now,
          maxAgeMs: i.run.maxAgeMs,
          beforeReading: () => structure.read('a language is read'),
        });
  if (i.held) {
    const current = new Set(structure.others);
    yield* deleteAll(
      ctx,
      [...i.held].filter(([l]) => l !== '' && !current.has(l)).map(([, docs]) => docs),
    );
  }
  return others;
}

/** What decides whether an incremental pass lists every article. */
interface ListingInputs {
  /** What the last pass saw; undefined after a reset or with a cursor older than the count. */
  before: HelpCenterCursor['seen'];
  /** The list's article count now, taken before this pass's export. */
  count: number;
  /** Distinct articles the export showed created after its start time; undefined: not readable. */
  created: number | undefined;
  places: string;
  exportStuck: boolean;
  now: number;
  maxAgeMs: number;
  defaultLocale: string;
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
  if (!i.before.locales) return 'no languages from an earlier pass';
  if (i.before.locales.default !== i.defaultLocale) return 'the default language changed';
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

/** What the article export showed beyond its articles. */
interface ExportOutcome {
  // More articles changed in one second than an export page holds: the export cannot page past that
  // second, so only the listing can show the rest.
  exportStuck: boolean;
  // Articles the export shows created since it started (drafts too: the list counts them); undefined
  // once one's creation time cannot be read (the count then proves nothing).
  created: Set<string> | undefined;
  // Articles new or changed since the last pass (bodies left out), whose translations the other
  // languages read; undefined when more changed than MAX_CHANGED_HELD.
  changed: Map<string, Article> | undefined;
}

/**
 * A new or changed default-language record, for its translations: its token differs from the held one
 * (a draft: it changed after the pass's start, not just re-read on the boundary second).
 */
function noteChanged(pass: ArticlePass, out: ExportOutcome, raw: unknown, startTime: number): void {
  if (!out.changed) return;
  const parsed = articleSchema.safeParse(raw);
  if (!parsed.success) return;
  const a = parsed.data;
  const id = String(a.id);
  const place = a.section_id == null ? [] : (pass.places.get(a.section_id) ?? []);
  const changed = a.draft
    ? Math.floor(Date.parse(a.updated_at) / 1000) > startTime
    : pass.known?.get(articleKey(pass.scope, id))?.version !== articleToken(pass.scope, a, place);
  if (!changed) return;
  out.changed.set(id, { ...a, body: null });
  if (out.changed.size > MAX_CHANGED_HELD) out.changed = undefined;
}

/**
 * An exported record this pass need not look at while the structure is not read: a published article
 * held with the same `updated_at` (its token can differ only by its place, which the structure decides),
 * or a draft not held that did not change after the pass's start (the boundary second, read again).
 */
function isQuiet(pass: ArticlePass, raw: unknown, startTime: number): boolean {
  const parsed = articleSchema.safeParse(raw);
  if (!parsed.success) return false;
  const a = parsed.data;
  const version = pass.known?.get(articleKey(pass.scope, String(a.id)))?.version;
  if (a.draft) return version === undefined && Math.floor(Date.parse(a.updated_at) / 1000) <= startTime;
  return version?.startsWith(`${a.updated_at}|`) === true;
}

/** The incremental article export from the help center's `startTime`, with a checkpoint after each page. */
async function* exportPass(
  ctx: ConnectorContext<SupportDeskCredentials>,
  pass: ArticlePass,
  state: HelpCenterCursor,
  startedAt: number,
  opts: { collect: boolean; progress: PassProgress; structure: HelpCenterStructure },
): AsyncGenerator<Event, ExportOutcome> {
  const { collect, progress, structure } = opts;
  const outcome: ExportOutcome = {
    exportStuck: false,
    created: new Set(),
    changed: collect ? new Map() : undefined,
  };
  for await (const step of exportArticles(ctx, state.startTime)) {
    const articles = step.page.articles;
    if (!structure.isRead && !articles.every((raw) => isQuiet(pass, raw, startedAt))) {
      await readStructure(structure, pass, 'the export shows a new or changed article');
    }
    for (const raw of articles) {
      outcome.created = noteCreated(outcome.created, raw, startedAt);
      // Every record of the page is quiet: unchanged, whatever the names around it.
      if (!structure.isRead) continue;
      if (collect) noteChanged(pass, outcome, raw, startedAt);
      yield* articleEvents(pass, raw);
    }
    state.startTime = step.endTime;
    if (articles.length >= ARTICLE_EXPORT_PAGE_SIZE && step.endTime === step.requested) {
      outcome.exportStuck = true;
    }
    yield checkpointOf(progress);
  }
  return outcome;
}

/**
 * Every article the listing shows: held ones it does not show (archived, deleted) or shows as drafts
 * leave, once the listing completed; ones whose change token differs from what is held are yielded.
 * Answers the ids of held articles it did not show at all: their translations leave with them.
 */
async function* listingPass(
  ctx: ConnectorContext<SupportDeskCredentials>,
  pass: ArticlePass,
): AsyncGenerator<Event, ReadonlySet<string>> {
  const known = pass.known ?? new Map<string, KnownDocument>();
  const summary = yield* listingPassOf<unknown, SupportDeskCursor>({
    signal: ctx.signal,
    known,
    list: () => articleListing(pass, listArticles(ctx)),
    readWhen: 'as_listed',
    // The listing carries the articles: articleEvents compares each with the held one itself.
    read: ([raw]) => ({ events: articleEvents(pass, raw) }),
    failures: ARTICLE_FAILURES,
    // A draft the listing showed was deleted as it came.
    settled: (key) => pass.handled.get(key) === DRAFT,
    // Yielded by the export moments ago, archived since.
    yieldedEarlier: () => yieldedThisPass(pass),
  });
  const gone = new Set<string>();
  if (!summary.complete) return gone;
  for (const key of known.keys()) {
    const id = parseArticleKey(key)?.id;
    if (id !== undefined && !summary.listed.has(key)) gone.add(id);
  }
  return gone;
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
  const run = new FailureRun({
    max: MAX_TRANSIENT_IN_A_ROW,
    source: sourceName(SUPPORT_DESK_SOURCE),
    what: 'ticket reads',
  });
  for await (const page of exportTickets(ctx, progress.ticketsFrom ?? { startTime: FROM_THE_START })) {
    const todo: Ticket[] = [];
    for (const raw of page.tickets) yield* ticketEvents(tickets, raw, todo);
    let retryLater = false;
    for await (const [, outcome] of mapInOrder(todo, FETCH_CONCURRENCY, (t) => ticketDocument(ctx, t))) {
      if (outcome.kind === 'failure' && outcome.externalId !== undefined) {
        tickets.handled.set(outcome.externalId, FAILED);
      }
      yield outcome;
      const transient = outcome.kind === 'failure' && outcome.retryable ? outcome.error : undefined;
      if (transient) retryLater = true;
      run.record(transient);
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
