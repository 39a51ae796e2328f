/**
 * A help center's structure: its categories and sections (every article's place: its tags, its
 * `Category > Section` line and part of its change token) and its languages (the default and the
 * others). Reading it costs three requests or more a sync, as many as everything else an unchanged sync
 * asks, so an incremental pass reads it only when something says it may have moved, and otherwise uses
 * what the last pass saw:
 *
 * - before any request: a first pass or a reset, a cursor without it, a structure older than the listing
 *   interval (the daily backstop), a failure in the last pass, a listing due (of every article or of a
 *   language);
 * - on the cheap signals every sync asks anyway: the article count differs from the last pass's, a
 *   language's probe (its count and newest edit) differs, or a language answers 404 (disabled);
 * - while the pass runs, before anything is rendered or compared by its token: an exported article not
 *   held with the same `updated_at`, a listing, a language's read.
 *
 * What no signal shows: a category or section renamed (or moved) with no article changed, a language
 * enabled, the default language changed. Those reach the items at the next read of the structure, the
 * listing interval at the latest.
 */
import { isSourceHttpError } from '../http.ts';
import type { ConnectorContext } from '../types.ts';
import { placesDigest, placesOf } from './articles.ts';
import {
  helpCenterLocales,
  type LocaleProbe,
  listCategories,
  listSections,
  probeLocale,
  type SupportDeskCredentials,
} from './client.ts';

type Ctx = ConnectorContext<SupportDeskCredentials>;

/** What a pass remembers of a help center's structure. */
export interface RememberedStructure {
  /** {@link placesDigest} of the places. */
  places: string;
  /** When it was last read (epoch ms); undefined in cursors saved before it was remembered. */
  structureAt?: number | undefined;
  locales?: { default: string; others: Record<string, unknown> } | undefined;
}

/** One help center's structure in this pass: the remembered one until {@link HelpCenterStructure.read}. */
export class HelpCenterStructure {
  /** Section id → its place; filled in place when read, so article passes holding it see the names. */
  readonly places = new Map<number, string[]>();
  digest: string;
  defaultLocale: string;
  others: string[];
  /** When the structure was read (this pass's time once read here). */
  readAt: number | undefined;
  private readonly ctx: Ctx;
  readonly subdomain: string;
  private readonly now: number;
  private reading: Promise<void> | undefined;
  private done = false;

  constructor(opts: {
    ctx: Ctx;
    subdomain: string;
    now: number;
    remembered: RememberedStructure | undefined;
  }) {
    this.ctx = opts.ctx;
    this.subdomain = opts.subdomain;
    this.now = opts.now;
    this.digest = opts.remembered?.places ?? '';
    this.defaultLocale = opts.remembered?.locales?.default ?? '';
    this.others = Object.keys(opts.remembered?.locales?.others ?? {});
    this.readAt = opts.remembered?.structureAt;
  }

  get isRead(): boolean {
    return this.done;
  }

  /** Reads categories, sections and languages, once a pass; `reason` goes to the log. */
  read(reason: string): Promise<void> {
    this.reading ??= this.readNow(reason);
    return this.reading;
  }

  private async readNow(reason: string): Promise<void> {
    // Why a sync costs these requests this time: an operator's question when an unchanged sync is not cheap.
    this.ctx.log.info({ reason, help_center: this.subdomain }, 'reading the Zendesk help center structure');
    const places = placesOf(await listCategories(this.ctx), await listSections(this.ctx));
    const languages = await helpCenterLocales(this.ctx);
    this.places.clear();
    for (const [id, names] of places) this.places.set(id, names);
    this.digest = placesDigest(places);
    this.defaultLocale = languages.default_locale.toLowerCase();
    this.others = [...new Set(languages.locales.map((l) => l.toLowerCase()))].filter(
      (l) => l !== this.defaultLocale,
    );
    this.readAt = this.now;
    this.done = true;
  }
}

/** What the last pass saw of a language, as far as its probe goes. */
interface ProbeSeen {
  count: number;
  newest?: string | undefined;
}

/**
 * Probes every other language of the structure that has no probe yet (one request each). A probe that
 * differs from the last pass's, or a language that answers 404, reads the structure (when not read yet)
 * and the languages it names are probed in turn.
 */
export async function probeLanguages(
  ctx: Ctx,
  structure: HelpCenterStructure,
  before: Record<string, ProbeSeen> | undefined,
  probes: Map<string, LocaleProbe>,
): Promise<void> {
  for (;;) {
    const locale = structure.others.find((l) => !probes.has(l));
    if (locale === undefined) return;
    let probe: LocaleProbe;
    try {
      probe = await probeLocale(ctx, locale);
    } catch (err) {
      // A remembered language the help center no longer has: the structure says which it has now.
      if (structure.isRead || !isSourceHttpError(err) || err.status !== 404) throw err;
      await structure.read(`the language ${locale} answers 404`);
      continue;
    }
    probes.set(locale, probe);
    const seen = before?.[locale];
    if (!structure.isRead && (seen?.count !== probe.count || seen.newest !== probe.newest)) {
      await structure.read(`the language ${locale} changed`);
    }
  }
}
