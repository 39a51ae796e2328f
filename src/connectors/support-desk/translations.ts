/**
 * The help center's other languages than its default: each translation of an article is an item
 * (`{id}:{locale}`, articles.ts). The export answers in the default language only, and a translation's
 * edit need not move its article's `updated_at`, so each language is watched on its own, one request a
 * sync ({@link probeLocale}: how many articles the language lists, and its newest edit), and read:
 *
 * - whole (its listing, 100 a request; it proves what left) on a first pass, for a language new to the
 *   connection, when the places changed, after a failure, when its count is not what the changes read
 *   this pass explain, or when its last listing is older than the listing interval;
 * - else, when its newest edit moved, newest edits first until one not newer than the last pass's newest;
 * - and for each article the export showed changed (its visibility, labels or section apply to every
 *   language), that article's translations, one request for all languages, unless more articles changed
 *   than the listings would cost: then every language is listed whole.
 *
 * An article that left (archived, deleted: the default language's listing proves it) takes every
 * translation with it; a translation removed, or back to draft, removes that item.
 */
import { isSourceHttpError } from '../http.ts';
import { mapInOrder } from '../toolkit/in-order.ts';
import { listingPass } from '../toolkit/listing-pass.ts';
import type { ConnectorContext, KnownDocument } from '../types.ts';
import {
  type ArticlePass,
  ARTICLES_TABLE,
  ARTICLE_FAILURES,
  articleEvents,
  articleKey,
  articleListing,
  DRAFT,
  GONE,
  FAILED,
  type ItemEvent,
  yieldedThisPass,
} from './articles.ts';
import {
  articleTranslations,
  type LocaleProbe,
  listArticles,
  type SupportDeskCredentials,
} from './client.ts';
import { type Article, translationSchema } from './schemas.ts';

/** What the last pass saw of one language. */
export interface LocaleSeen {
  count: number;
  newest?: string | undefined;
  /** When it was last listed whole (epoch ms). */
  listedAt: number;
  failed?: boolean | undefined;
}

/** Translation reads in flight at once. */
const READ_CONCURRENCY = 4;
const PAGE = 100;

export interface TranslationInputs {
  /** One pass per language (its scope, held items and what it did). */
  passes: Map<string, ArticlePass>;
  probes: Map<string, LocaleProbe>;
  before: Record<string, LocaleSeen> | undefined;
  /** Default-language records the export showed new or changed, by article id. */
  changed: Map<string, Article>;
  /** Article ids the default language's listing proved gone. */
  gone: ReadonlySet<string>;
  /** Nothing held for this help center, or a reset: every language is listed whole. */
  first: boolean;
  /** Why every language is listed whole this pass (places changed, the export stuck), if so. */
  listAll: boolean;
  now: number;
  maxAgeMs: number;
  /** Before the first read: the names the items carry must be current (structure.ts). */
  beforeReading: () => Promise<void>;
}

type Ctx = ConnectorContext<SupportDeskCredentials>;

/** Every other language of one help center; answers what the next pass compares with. */
export async function* translationPass(
  ctx: Ctx,
  t: TranslationInputs,
): AsyncGenerator<ItemEvent, Record<string, LocaleSeen>> {
  yield* goneWithTheirArticles(t);
  const whole = new Set([...t.passes.keys()].filter((locale) => mustListWhole(t, locale)));
  const rest = [...t.passes.keys()].filter((l) => !whole.has(l));
  const listingCost = rest.reduce((n, l) => n + Math.max(1, Math.ceil(t.probes.get(l)!.count / PAGE)), 0);
  if (t.changed.size > listingCost) for (const l of rest) whole.add(l);
  const reading = [...t.passes.keys()].filter((l) => !whole.has(l));
  const expected = new Map(reading.map((l) => [l, t.before?.[l]?.count ?? 0]));
  if (reading.length > 0 && t.changed.size > 0) {
    await t.beforeReading();
    yield* readTranslations(ctx, t, reading, expected);
  }
  const out: Record<string, LocaleSeen> = {};
  for (const [locale, pass] of t.passes) {
    const probe = t.probes.get(locale)!;
    const before = t.before?.[locale];
    if (!whole.has(locale) && probe.count !== expected.get(locale)) whole.add(locale);
    if (whole.has(locale)) {
      ctx.log.info({ locale }, 'listing every Zendesk article in a language');
      await t.beforeReading();
      yield* wholeListing(ctx, pass);
    } else if (probe.newest !== before?.newest) {
      await t.beforeReading();
      yield* newestEdits(ctx, pass, before?.newest);
    }
    const failed = [...pass.handled.values()].includes(FAILED) || pass.unidentifiedFailure;
    out[locale] = {
      count: probe.count,
      ...(probe.newest === undefined ? {} : { newest: probe.newest }),
      listedAt: whole.has(locale) || !before ? t.now : before.listedAt,
      ...(failed ? { failed } : {}),
    };
  }
  return out;
}

function mustListWhole(t: TranslationInputs, locale: string): boolean {
  const before = t.before?.[locale];
  return t.first || t.listAll || !before || before.failed === true || t.now - before.listedAt >= t.maxAgeMs;
}

/** Translations of articles that left: deleted with them. */
function* goneWithTheirArticles(t: TranslationInputs): Generator<ItemEvent> {
  for (const id of t.gone) {
    for (const pass of t.passes.values()) {
      const key = articleKey(pass.scope, id);
      if (pass.known?.has(key) && !pass.handled.has(key)) {
        pass.handled.set(key, GONE);
        yield { kind: 'deleted', externalId: key, table: ARTICLES_TABLE };
      }
    }
  }
}

/**
 * Each changed article's translations: an item per language read, a deletion where a held language is
 * missing. `expected` counts what each language's list should count now.
 */
async function* readTranslations(
  ctx: Ctx,
  t: TranslationInputs,
  locales: readonly string[],
  expected: Map<string, number>,
): AsyncGenerator<ItemEvent> {
  const read = async (a: Article) => {
    try {
      return await articleTranslations(ctx, String(a.id));
    } catch (err) {
      // Gone since the export showed it: the default language's count and listing say so.
      if (isSourceHttpError(err) && err.status === 404) return undefined;
      throw err;
    }
  };
  for await (const [article, translations] of mapInOrder([...t.changed.values()], READ_CONCURRENCY, read)) {
    if (translations === undefined) continue;
    const byLocale = new Map<string, unknown>();
    for (const raw of translations) {
      const parsed = translationSchema.safeParse(raw);
      if (parsed.success) byLocale.set(parsed.data.locale.toLowerCase(), raw);
    }
    for (const locale of locales) {
      const pass = t.passes.get(locale)!;
      const key = articleKey(pass.scope, String(article.id));
      const wasHeld = pass.known?.has(key) ?? false;
      const raw = byLocale.get(locale);
      expected.set(locale, expected.get(locale)! + (raw === undefined ? 0 : 1) - (wasHeld ? 1 : 0));
      if (raw === undefined) {
        if (wasHeld && !pass.handled.has(key)) {
          pass.handled.set(key, GONE);
          yield { kind: 'deleted', externalId: key, table: ARTICLES_TABLE };
        }
        continue;
      }
      yield* articleEvents(pass, onArticle(article, raw));
    }
  }
}

/** A translation as its article displayed in that language: the article's fields, the translation's text. */
export function onArticle(article: Article, raw: unknown): unknown {
  const t = raw as Record<string, unknown>;
  return {
    ...article,
    title: t['title'],
    body: t['body'],
    draft: t['draft'],
    html_url: t['html_url'],
    locale: t['locale'],
    edited_at: t['updated_at'],
  };
}

/**
 * The whole listing of one language: items for what it shows; once complete, held items it does not show
 * (or shows as drafts) leave.
 */
async function* wholeListing(ctx: Ctx, pass: ArticlePass): AsyncGenerator<ItemEvent> {
  const events = listingPass<unknown, unknown>({
    signal: ctx.signal,
    known: pass.known ?? new Map<string, KnownDocument>(),
    list: () => articleListing(pass, listArticles(ctx, { locale: pass.scope.locale })),
    readWhen: 'as_listed',
    read: ([raw]) => ({ events: articleEvents(pass, raw) }),
    failures: ARTICLE_FAILURES,
    settled: (key) => {
      const done = pass.handled.get(key);
      return done === DRAFT || done === GONE;
    },
    yieldedEarlier: () => yieldedThisPass(pass),
    onDeleted: (key) => {
      if (pass.known?.has(key)) pass.handled.set(key, GONE);
    },
  });
  // No checkpoint is asked of this pass: its events are the items'.
  for await (const event of events) if (event.kind !== 'checkpoint') yield event;
}

/** One language's articles by their last edit, newest first, down to the last pass's newest. */
async function* newestEdits(
  ctx: Ctx,
  pass: ArticlePass,
  since: string | undefined,
): AsyncGenerator<ItemEvent> {
  const sinceMs = since === undefined ? Number.NEGATIVE_INFINITY : Date.parse(since.split('|')[0]!);
  for await (const page of listArticles(ctx, { locale: pass.scope.locale, newestEditsFirst: true })) {
    let older = false;
    for (const raw of page.articles) {
      const edited = (raw as { edited_at?: unknown } | null)?.edited_at;
      const at = typeof edited === 'string' ? Date.parse(edited) : Number.NaN;
      // Same-second edits come again: their tokens make them no-ops.
      if (!Number.isNaN(at) && at < sinceMs) older = true;
      else yield* articleEvents(pass, raw);
    }
    if (older) return;
  }
}
