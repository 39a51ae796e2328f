/**
 * Zendesk response shapes (vendor-apis/zendesk.md §3-§5) with the vendor's field names: only the fields
 * the sync reads. `z.object` ignores the others, so a field we never read
 * cannot fail a record by changing type; what the reference shows as nullable or absent in some answers
 * is so here. Pages keep their records unparsed where one bad record must be that record's failure, not
 * the page's.
 */
import { z } from 'zod';

/** Zendesk ids are integers (below 2^53: `7253351877519`). */
const id = z.number().int();

/** Cursor pagination (§3.1): `meta` and `links` of every list that was asked with `page[size]`. */
const cursorMetaSchema = z.object({
  has_more: z.boolean(),
  after_cursor: z.string().nullish(),
  before_cursor: z.string().nullish(),
});
const cursorLinksSchema = z.object({
  next: z.string().nullish(),
  prev: z.string().nullish(),
});

// ---------------------------------------------------------------------------------------------------
// Help Center (§4)
// ---------------------------------------------------------------------------------------------------

/** One article, as the list endpoints (§4.1) and the incremental export (§4.3) answer it. */
export const articleSchema = z.object({
  id,
  html_url: z.string(),
  /** Per translation: a draft is not published. */
  draft: z.boolean(),
  section_id: id.nullish(),
  created_at: z.string().optional(),
  /** Any change of the article's metadata or content; what the export's `start_time` compares with. */
  updated_at: z.string(),
  /** Legacy alias of `title`. */
  name: z.string().nullish(),
  title: z.string(),
  /** Null: visible to everyone. */
  user_segment_id: id.nullish(),
  user_segment_ids: z.array(id).nullish(),
  label_names: z.array(z.string()).nullish(),
  /** HTML. */
  body: z.string().nullish(),
  /** The locale the record is displayed in (its translation's). */
  locale: z.string().optional(),
  /** The last edit of the title or body in the displayed locale. */
  edited_at: z.string().nullish(),
});
export type Article = z.infer<typeof articleSchema>;

/** A locale's articles (`GET /api/v2/help_center/{locale}/articles`), offset-paginated: `count` and the page. */
export const localeProbeSchema = z.object({
  count: z.number().int().nonnegative(),
  articles: z.array(z.unknown()),
});

/**
 * One translation of an article (`GET /api/v2/help_center/articles/{id}/translations`): the text of one
 * language. The article's own fields (section, labels, visibility) are not repeated here.
 */
export const translationSchema = z.object({
  locale: z.string().min(1),
  title: z.string(),
  body: z.string().nullish(),
  draft: z.boolean(),
  html_url: z.string(),
  updated_at: z.string(),
});
export type Translation = z.infer<typeof translationSchema>;

export const translationsPageSchema = z.object({
  translations: z.array(z.unknown()),
  meta: cursorMetaSchema,
  links: cursorLinksSchema.optional(),
});

/** `GET /api/v2/help_center/locales`: the help center's enabled languages and its default one. */
export const helpCenterLocalesSchema = z.object({
  locales: z.array(z.string().min(1)),
  default_locale: z.string().min(1),
});
export type HelpCenterLocales = z.infer<typeof helpCenterLocalesSchema>;

/** One brand (`GET /api/v2/brands`): only what finding its help center needs. */
const brandSchema = z.object({
  id,
  name: z.string(),
  subdomain: z.string(),
  active: z.boolean().optional(),
  is_deleted: z.boolean().optional(),
  has_help_center: z.boolean().optional(),
  /** `enabled`, `disabled` or `restricted` (agents only: not yet live). */
  help_center_state: z.string().nullish(),
});
export type Brand = z.infer<typeof brandSchema>;

export const brandsPageSchema = z.object({
  brands: z.array(brandSchema),
  meta: cursorMetaSchema,
  links: cursorLinksSchema.optional(),
});

/** `GET /api/v2/help_center/incremental/articles?start_time=` (§4.3). */
export const articleExportPageSchema = z.object({
  articles: z.array(z.unknown()),
  count: z.number().optional(),
  /** The same URL with `start_time` = `end_time`; null (or equal to the request) on the last page. */
  next_page: z.string().nullish(),
  /** The time of the last change of the last article on the page, in epoch seconds. */
  end_time: z.number().nullish(),
});
export type ArticleExportPage = z.infer<typeof articleExportPageSchema>;

/** `GET /api/v2/help_center/articles?page[size]=` (§4.1, cursor mode). */
export const articleListPageSchema = z.object({
  articles: z.array(z.unknown()),
  meta: cursorMetaSchema,
  links: cursorLinksSchema.optional(),
});
export type ArticleListPage = z.infer<typeof articleListPageSchema>;

const categorySchema = z.object({
  id,
  name: z.string(),
});
export type Category = z.infer<typeof categorySchema>;

const sectionSchema = z.object({
  id,
  category_id: id.nullish(),
  name: z.string(),
  /** Set on a section nested in another one. */
  parent_section_id: id.nullish(),
});
export type Section = z.infer<typeof sectionSchema>;

export const categoriesPageSchema = z.object({
  categories: z.array(categorySchema),
  meta: cursorMetaSchema,
  links: cursorLinksSchema.optional(),
});
export const sectionsPageSchema = z.object({
  sections: z.array(sectionSchema),
  meta: cursorMetaSchema,
  links: cursorLinksSchema.optional(),
});

// ---------------------------------------------------------------------------------------------------
// Support tickets (§5)
// ---------------------------------------------------------------------------------------------------

/**
 * One ticket of the incremental export (§5.1). Its `description` is left unread: it is the first comment,
 * which may be an internal note.
 */
export const ticketSchema = z.object({
  id,
  created_at: z.string().optional(),
  updated_at: z.string(),
  type: z.string().nullish(),
  subject: z.string().nullish(),
  raw_subject: z.string().nullish(),
  priority: z.string().nullish(),
  /** `new`, `open`, `pending`, `hold`, `solved`, `closed`, and `deleted` in the export. */
  status: z.string(),
  requester_id: id.nullish(),
  tags: z.array(z.string()).nullish(),
});
export type Ticket = z.infer<typeof ticketSchema>;

/** `GET /api/v2/incremental/tickets/cursor.json` (§5.1, `CursorBasedExportIncrementalTicketsResponse`). */
export const ticketExportPageSchema = z.object({
  tickets: z.array(z.unknown()),
  after_cursor: z.string().nullish(),
  end_of_stream: z.boolean(),
});
export type TicketExportPage = z.infer<typeof ticketExportPageSchema>;

const attachmentSchema = z.object({
  id: id.optional(),
  file_name: z.string(),
  content_url: z.string(),
});

/** One ticket comment (§5.2). `public: false` is an internal note. */
export const commentSchema = z.object({
  id,
  type: z.string().optional(),
  author_id: id.nullish(),
  public: z.boolean(),
  body: z.string().nullish(),
  html_body: z.string().nullish(),
  plain_body: z.string().nullish(),
  attachments: z.array(attachmentSchema).nullish(),
  created_at: z.string(),
});
export type Comment = z.infer<typeof commentSchema>;

/** A sideloaded user (`include=users`): only what naming a comment's author needs. */
const userSchema = z.object({ id, name: z.string().nullish() });

/** `GET /api/v2/tickets/{id}/comments.json?page[size]=&include=users` (§5.2, cursor mode). */
export const commentsPageSchema = z.object({
  comments: z.array(commentSchema),
  users: z.array(userSchema).optional(),
  meta: cursorMetaSchema,
  links: cursorLinksSchema.optional(),
});
