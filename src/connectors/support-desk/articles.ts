/**
 * Help Center articles as items, whichever way a pass read them (the export, a listing, an article's
 * translations): their keys, change tokens, documents, and what one record means for the connection.
 *
 * One item per article and language. Keys: the article id for the default language of the connection's
 * own help center (as before languages were synced, so held items keep their ids), `{id}:{locale}` for
 * another language, both prefixed with `{subdomain}/` for another brand's help center
 * (`support/123:fr`). An item's help center and language are read back from its key, which is how a
 * pass knows which held items it answers for.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { sourceName } from '../credential-check.ts';
import type { FailureRunOptions, ListedRecord } from '../toolkit/listing-pass.ts';
import type { KnownDocument, SourceDocument, SyncEvent } from '../types.ts';
import { SUPPORT_DESK_SOURCE } from './client.ts';
import { renderArticle } from './render.ts';
import { type Article, articleSchema, type Category, type Section } from './schemas.ts';

export const ARTICLES_TABLE = 'support_desk_articles';

/** What a pass did with a key, beside the change token of a document it yielded. */
export const DRAFT = '\u0000draft';
export const GONE = '\u0000gone';
export const FAILED = '\u0000failed';
export const isToken = (v: string | undefined): v is string => v !== undefined && !v.startsWith('\u0000');

/** A document, a deletion or a failure: what a record can mean (checkpoints are the caller's). */
export type ItemEvent = Exclude<SyncEvent<unknown>, { kind: 'checkpoint' }>;

/** One help center and one of its languages. */
export interface ArticleScope {
  /** `''` for the connection's own help center, else `{subdomain}/`. */
  prefix: string;
  locale: string;
  /** The help center's default language: keys without a locale, and the export's records. */
  isDefault: boolean;
  /** The brand tag (`brand:{subdomain}`) when the connection syncs brands; undefined otherwise. */
  brandTag: string | undefined;
}

export function articleKey(scope: ArticleScope, id: string): string {
  return scope.isDefault ? `${scope.prefix}${id}` : `${scope.prefix}${id}:${scope.locale}`;
}

const KEY = /^(?:([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)\/)?(\d+)(?::([A-Za-z0-9-]+))?$/;

/** A held item's help center prefix, article id and (for another language than the default) locale. */
export function parseArticleKey(
  key: string,
): { prefix: string; id: string; locale: string | undefined } | undefined {
  const m = KEY.exec(key);
  if (!m) return undefined;
  return { prefix: m[1] === undefined ? '' : `${m[1]}/`, id: m[2]!, locale: m[3] };
}

export interface ArticlePass {
  scope: ArticleScope;
  /** Held items of this help center and language, by key; undefined in a reset. */
  known: Map<string, KnownDocument> | undefined;
  /** Section id → category, parent sections and section names, outermost first. */
  places: Map<number, string[]>;
  /** What this pass did with each key: the change token it yielded, DRAFT, GONE or FAILED. */
  handled: Map<string, string>;
  /** A record without a readable id failed (it is in no `handled` entry). */
  unidentifiedFailure: boolean;
}

/** Each section's place: its category's name, then its parent sections' and its own. */
export function placesOf(
  categories: readonly Category[],
  sections: readonly Section[],
): Map<number, string[]> {
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

/** A digest of every section's place (its category and section names), in section order. */
export function placesDigest(places: Map<number, string[]>): string {
  const hash = createHash('sha256');
  for (const [id, names] of [...places].sort(([a], [b]) => a - b))
    hash.update(`${id}\u0001${names.join('\u0000')}\u0002`);
  return hash.digest('hex').slice(0, 16);
}

function placeOf(pass: ArticlePass, a: Article): string[] {
  return a.section_id == null ? [] : (pass.places.get(a.section_id) ?? []);
}

const digest = (parts: readonly unknown[], length: number) =>
  createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, length);

/**
 * The default language: `updated_at` (every change of the article, its metadata included: section,
 * labels, visibility) plus a digest of what is named around it (its place, language and brand tag), which
 * changes without the article changing. Another language: a digest of the translation's text and URL and
 * of the article's fields the item shows, the same whichever request (a listing, the translations) read
 * it, since their times need not agree.
 */
export function articleToken(scope: ArticleScope, a: Article, place: readonly string[]): string {
  if (scope.isDefault) {
    return `${a.updated_at}|${digest([place, scope.locale, scope.brandTag ?? null], 12)}`;
  }
  return `t|${digest(
    [
      a.title,
      a.body ?? '',
      a.html_url,
      place,
      a.label_names ?? [],
      a.user_segment_id ?? null,
      a.user_segment_ids ?? [],
      scope.brandTag ?? null,
    ],
    24,
  )}`;
}

function shapeFailure(pass: ArticlePass, raw: unknown, error: z.ZodError): ItemEvent[] {
  const id = idOf(raw);
  const key = id === undefined ? undefined : articleKey(pass.scope, id);
  if (key !== undefined) {
    if (pass.handled.get(key) === FAILED) return [];
    pass.handled.set(key, FAILED);
  } else {
    pass.unidentifiedFailure = true;
  }
  const what = pass.scope.isDefault ? 'an article' : `an article in ${pass.scope.locale}`;
  return [
    {
      kind: 'failure',
      ...(key === undefined ? {} : { externalId: key, table: ARTICLES_TABLE }),
      error: new Error(
        `${sourceName(SUPPORT_DESK_SOURCE)} answered ${what}${id === undefined ? '' : ` (${id})`} in an unexpected shape: ${z.prettifyError(error).replace(/\s+/g, ' ')}`,
      ),
      retryable: false,
    },
  ];
}

/** What one record (an export or listing row, or a translation on its article) means for the connection. */
export function articleEvents(pass: ArticlePass, raw: unknown): ItemEvent[] {
  const parsed = articleSchema.safeParse(raw);
  if (!parsed.success) return shapeFailure(pass, raw, parsed.error);
  const a = parsed.data;
  const key = articleKey(pass.scope, String(a.id));
  const prev = pass.handled.get(key);
  if (a.draft) {
    if (prev === DRAFT) return [];
    pass.handled.set(key, DRAFT);
    // Yielded earlier in this pass (published then, a draft now), or held from an earlier one.
    const held = isToken(prev) || (pass.known?.has(key) ?? false);
    return held ? [{ kind: 'deleted', externalId: key, table: ARTICLES_TABLE }] : [];
  }
  const place = placeOf(pass, a);
  const token = articleToken(pass.scope, a, place);
  if (prev === token) return [];
  if (prev === undefined && pass.known?.get(key)?.version === token) {
    pass.handled.set(key, token);
    return [];
  }
  let markdown: string;
  try {
    markdown = renderArticle(a, place);
  } catch (err) {
    pass.handled.set(key, FAILED);
    return [
      {
        kind: 'failure',
        externalId: key,
        table: ARTICLES_TABLE,
        error: new Error(
          `${sourceName(SUPPORT_DESK_SOURCE)} article ${key} (${JSON.stringify(a.title)}) could not be converted: ${err instanceof Error ? err.message : String(err)}`,
        ),
        retryable: false,
      },
    ];
  }
  pass.handled.set(key, token);
  return [{ kind: 'document', doc: articleDocument(pass.scope, key, a, place, token, markdown) }];
}

function articleDocument(
  scope: ArticleScope,
  key: string,
  a: Article,
  place: readonly string[],
  token: string,
  markdown: string,
): SourceDocument {
  const everyone = a.user_segment_id == null && (a.user_segment_ids ?? []).length === 0;
  const tags = [
    'support_desk',
    `locale:${scope.locale}`,
    ...(scope.brandTag ? [scope.brandTag] : []),
    ...place,
    ...(a.label_names ?? []),
  ]
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return {
    externalId: key,
    title: a.title,
    url: a.html_url,
    markdown,
    updatedAt: scope.isDefault ? a.updated_at : (a.edited_at ?? a.updated_at),
    visibility: everyone ? 'public' : 'private',
    tags: [...new Set(tags)],
    table: ARTICLES_TABLE,
    version: token,
  };
}

export function idOf(raw: unknown): string | undefined {
  if (raw && typeof raw === 'object' && 'id' in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
    if (typeof id === 'string' && /^\d+$/.test(id)) return id;
  }
  return undefined;
}

export function isDraft(raw: unknown): boolean {
  return Boolean(raw && typeof raw === 'object' && (raw as { draft?: unknown }).draft === true);
}

/**
 * A listing's records as the listing pass sees them: a published article is an item, a draft is not (its
 * held copy leaves as it is read), a record without a readable id proves the listing incomplete.
 */
export async function* articleListing<Cursor>(
  pass: ArticlePass,
  pages: AsyncIterable<{ articles: readonly unknown[] }>,
): AsyncGenerator<ListedRecord<unknown, Cursor>> {
  for await (const page of pages) {
    for (const raw of page.articles) {
      const id = idOf(raw);
      if (id === undefined) {
        yield { kind: 'unreadable', id: undefined, events: articleEvents(pass, raw) };
        continue;
      }
      const key = articleKey(pass.scope, id);
      yield isDraft(raw) ? { kind: 'not_item', id: key, entry: raw } : { kind: 'item', id: key, entry: raw };
    }
  }
}

/** Documents this pass yielded that the connection did not hold before. */
export function* yieldedThisPass(pass: ArticlePass): Generator<{ id: string; table: string }> {
  for (const [key, done] of pass.handled) {
    if (isToken(done) && !pass.known?.has(key)) yield { id: key, table: ARTICLES_TABLE };
  }
}

/** Listings carry their articles: no read of theirs fails on its own, so the run never grows. */
export const ARTICLE_FAILURES: FailureRunOptions = {
  max: 1,
  source: sourceName(SUPPORT_DESK_SOURCE),
  what: 'article reads',
};
