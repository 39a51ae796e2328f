/**
 * Reads again exactly the Help Center articles a change notification named (webhooks.ts), never
 * trusting the event: per article, its record (`GET /api/v2/help_center/articles/{id}`) and its
 * translations (one request for every language), plus, once per help center and notification batch, the
 * categories, sections and languages its items are named with (structure.ts). Each language the help
 * center has becomes the same item, with the same change token, as a scheduled sync makes of it (one per
 * language, articles.ts), so the next scheduled sync finds it held and reads nothing of it again.
 *
 * - a published translation: a `document`; a draft or a missing one: `deleted`;
 * - an article no help center of the connection shows (archived, deleted; 404): every language `deleted`;
 * - a 403 (a restricted article) or a source that keeps failing: that article's `failure`.
 *
 * With `brands`, an event names only the article (its brand comes as a number the connection does not
 * store): it is looked for in each help center the connection syncs, the connection's own first; article
 * ids are unique across the account, so the first that shows it is its home.
 */
import { isAppError } from '../../lib/errors.ts';
import { sourceName } from '../credential-check.ts';
import { isSourceHttpError, isTransientSourceError, type SourceHttpError } from '../http.ts';
import type { ChangedDocument, ConnectorContext, SyncEvent } from '../types.ts';
import {
  ARTICLES_TABLE,
  type ArticlePass,
  articleEvents,
  articleKey,
  type ItemEvent,
  parseArticleKey,
} from './articles.ts';
import { type HelpCenter, type HelpCenters, helpCenters } from './brands.ts';
import {
  articleTranslations,
  showArticle,
  SUPPORT_DESK_SOURCE,
  type SupportDeskCredentials,
} from './client.ts';
import { articleSchema, translationSchema } from './schemas.ts';
import { HelpCenterStructure } from './structure.ts';
import { onArticle } from './translations.ts';

type Ctx = ConnectorContext<SupportDeskCredentials>;

export async function* syncChangedArticles(
  ctx: Ctx,
  changes: readonly ChangedDocument[],
): AsyncGenerator<SyncEvent<never>> {
  const wanted = articlesNamed(changes);
  if (wanted.size === 0) return;
  const { centers } = await quietly(helpCenters(ctx));
  const readers = centers.map((hc) => new HelpCenterReader(ctx, hc));
  for (const [id, prefix] of wanted) {
    ctx.signal.throwIfAborted();
    const named = readers.filter((r) => r.hc.prefix === prefix);
    const candidates = named.length > 0 ? named : readers;
    let found = false;
    for (const reader of candidates) {
      if ((yield* reader.article(id)) !== 'missing') {
        found = true;
        break;
      }
    }
    if (!found) for (const reader of candidates) yield* reader.gone(id);
  }
}

/** Article ids by the help center prefix their key names (undefined: whichever shows it), once each. */
function articlesNamed(changes: readonly ChangedDocument[]): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const change of changes) {
    if (change.table !== ARTICLES_TABLE) continue;
    const key = parseArticleKey(change.externalId);
    if (!key) continue;
    // A bare id (what webhooks.ts names) may be any help center's, the connection's own first.
    const prefix = key.prefix === '' ? undefined : key.prefix;
    out.set(key.id, out.has(key.id) && out.get(key.id) !== prefix ? undefined : prefix);
  }
  return out;
}

/**
 * The help centers the connection syncs. A named brand that cannot be read is the scheduled sync's to
 * report (it says so on every pass); here it is only one help center fewer to look in.
 */
async function quietly(pass: AsyncGenerator<ItemEvent, HelpCenters>): Promise<HelpCenters> {
  for (;;) {
    const step = await pass.next();
    if (step.done) return step.value;
  }
}

/** One help center's reads for this batch: its structure read once, one pass per language. */
class HelpCenterReader {
  readonly hc: HelpCenter;
  private readonly ctx: Ctx;
  private readonly structure: HelpCenterStructure;
  private readonly passes = new Map<string, ArticlePass>();

  constructor(base: Ctx, hc: HelpCenter) {
    this.hc = hc;
    this.ctx = { ...base, baseUrl: hc.baseUrl };
    this.structure = new HelpCenterStructure({
      ctx: this.ctx,
      subdomain: hc.subdomain,
      now: Date.now(),
      remembered: undefined,
    });
  }

  /** Every language of the article as an item or a deletion; `missing` when this help center has none. */
  async *article(id: string): AsyncGenerator<ItemEvent, 'found' | 'missing' | 'failed'> {
    let raw: unknown;
    try {
      raw = await showArticle(this.ctx, id);
      if (raw === undefined) return 'missing';
      const parsed = articleSchema.safeParse(raw);
      if (!parsed.success) {
        await this.structure.read('a change notification names an article');
        yield* articleEvents(this.pass(this.structure.defaultLocale), raw);
        return 'failed';
      }
      await this.structure.read('a change notification names an article');
      const byLocale = await this.translations(id);
      if (byLocale === undefined) return 'missing';
      const shownIn = parsed.data.locale?.toLowerCase();
      for (const locale of this.locales()) {
        const pass = this.pass(locale);
        const translation = byLocale.get(locale);
        if (!translation || translation.draft) {
          yield { kind: 'deleted', externalId: articleKey(pass.scope, id), table: ARTICLES_TABLE };
          continue;
        }
        // The default language as the export shows it, where the record is in it.
        const record =
          shownIn === locale && pass.scope.isDefault ? raw : onArticle(parsed.data, translation.raw);
        yield* articleEvents(pass, record);
      }
      return 'found';
    } catch (err) {
      if (this.ctx.signal.aborted || isAppError(err) || !isSourceHttpError(err)) throw err;
      yield this.failure(id, err);
      return 'failed';
    }
  }

  /** Every language's item of an article no help center shows: deleted (a no-op for what is not held). */
  async *gone(id: string): AsyncGenerator<ItemEvent> {
    await this.structure.read('a change notification names an article that is gone');
    for (const locale of this.locales()) {
      yield { kind: 'deleted', externalId: articleKey(this.pass(locale).scope, id), table: ARTICLES_TABLE };
    }
  }

  private locales(): string[] {
    return [this.structure.defaultLocale, ...this.structure.others];
  }

  /** The article's translations by locale (lower case); undefined when the article is gone meanwhile. */
  private async translations(id: string): Promise<Map<string, { draft: boolean; raw: unknown }> | undefined> {
    let all: unknown[];
    try {
      all = await articleTranslations(this.ctx, id);
    } catch (err) {
      if (isSourceHttpError(err) && err.status === 404) return undefined;
      throw err;
    }
    const out = new Map<string, { draft: boolean; raw: unknown }>();
    for (const raw of all) {
      const parsed = translationSchema.safeParse(raw);
      if (parsed.success) out.set(parsed.data.locale.toLowerCase(), { draft: parsed.data.draft, raw });
    }
    return out;
  }

  private pass(locale: string): ArticlePass {
    let pass = this.passes.get(locale);
    if (!pass) {
      pass = {
        scope: {
          prefix: this.hc.prefix,
          brandTag: this.hc.brandTag,
          locale,
          isDefault: locale === this.structure.defaultLocale,
        },
        // Nothing is compared with what is held: the notification says the article changed.
        known: undefined,
        places: this.structure.places,
        handled: new Map(),
        unidentifiedFailure: false,
      };
      this.passes.set(locale, pass);
    }
    return pass;
  }

  private failure(id: string, err: SourceHttpError): ItemEvent {
    const key = `${this.hc.prefix}${id}`;
    const forbidden = err.status === 403;
    return {
      kind: 'failure',
      externalId: key,
      table: ARTICLES_TABLE,
      // The source's own error when it refused: a 403 is read as a missing permission.
      error: forbidden
        ? err
        : new Error(`${sourceName(SUPPORT_DESK_SOURCE)} article ${key} could not be read: ${err.message}`),
      retryable: !forbidden && isTransientSourceError(err),
    };
  }
}
