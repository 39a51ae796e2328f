/**
 * Notion API response shapes (vendor-apis/notion.md, API version 2025-09-03), field names as the API
 * sends them. Objects are open (`z.object` / `z.looseObject`): fields Notion adds later pass. Blocks and
 * property values are loose because their payload sits under a key named by their `type`, which a closed
 * object would strip.
 *
 * List results are parsed one item at a time (`listSchema` keeps them `unknown`), so one malformed page
 * or block fails that document, not the page of results it arrived in.
 */
import { z } from 'zod';

const annotationsSchema = z.object({
  bold: z.boolean(),
  italic: z.boolean(),
  strikethrough: z.boolean(),
  underline: z.boolean(),
  code: z.boolean(),
  color: z.string(),
});

export const richTextSchema = z.object({
  type: z.string(),
  plain_text: z.string(),
  href: z.string().nullable().optional(),
  annotations: annotationsSchema,
  text: z
    .object({
      content: z.string(),
      link: z.object({ url: z.string() }).nullable().optional(),
    })
    .optional(),
  mention: z.looseObject({ type: z.string() }).optional(),
  equation: z.object({ expression: z.string() }).optional(),
});
export type RichText = z.infer<typeof richTextSchema>;
const richTextArray = z.array(richTextSchema);

/** The `parent` of a page, block, database or data source. */
const parentSchema = z.object({
  type: z.string(),
  page_id: z.string().optional(),
  block_id: z.string().optional(),
  database_id: z.string().optional(),
  data_source_id: z.string().optional(),
  workspace: z.boolean().optional(),
});

/** One property value of a page; its value sits under the key named by `type`. */
const propertyValueSchema = z.looseObject({ id: z.string(), type: z.string() });
export type PropertyValue = z.infer<typeof propertyValueSchema>;

export const pageSchema = z.object({
  object: z.literal('page'),
  id: z.string(),
  created_time: z.string(),
  last_edited_time: z.string(),
  parent: parentSchema,
  archived: z.boolean().optional(),
  in_trash: z.boolean().optional(),
  /** Newer API versions: archived (not trashed) pages. */
  is_archived: z.boolean().optional(),
  properties: z.record(z.string(), propertyValueSchema),
  url: z.string(),
  public_url: z.string().nullable().optional(),
});
export type NotionPage = z.infer<typeof pageSchema>;

/** A data source as search lists it (2025-09-03: databases are containers of data sources). */
export const dataSourceSchema = z.object({
  object: z.literal('data_source'),
  id: z.string(),
  title: richTextArray.optional(),
  parent: parentSchema.optional(),
  archived: z.boolean().optional(),
  in_trash: z.boolean().optional(),
});

export const databaseSchema = z.object({
  object: z.literal('database'),
  id: z.string(),
  title: richTextArray,
  parent: parentSchema.optional(),
  archived: z.boolean().optional(),
  in_trash: z.boolean().optional(),
  data_sources: z.array(z.object({ id: z.string(), name: z.string().optional() })),
  url: z.string().optional(),
});
export type NotionDatabase = z.infer<typeof databaseSchema>;

/** What every block carries; the payload under `block[type]` is read by the renderer. */
export const blockSchema = z.looseObject({
  object: z.literal('block'),
  id: z.string(),
  type: z.string(),
  has_children: z.boolean(),
  parent: parentSchema.optional(),
  archived: z.boolean().optional(),
  in_trash: z.boolean().optional(),
  last_edited_time: z.string().optional(),
});
export type NotionBlock = z.infer<typeof blockSchema>;

/** The list envelope of search, block children and data-source queries. */
export const listSchema = z.object({
  object: z.literal('list'),
  results: z.array(z.unknown()),
  next_cursor: z.string().nullable(),
  has_more: z.boolean(),
  /**
   * Absent or `complete` on an ordinary answer; `incomplete` (reason `query_result_limit_reached`) on every
   * page of a data-source query that hit the per-query cap, where `has_more` is false all the same.
   */
  request_status: z
    .object({ type: z.string(), incomplete_reason: z.string().optional() })
    .nullable()
    .optional(),
});
export type NotionList = z.infer<typeof listSchema>;

/** A search result before it is told apart: enough to name it in a failure. */
export const searchItemSchema = z.looseObject({ object: z.string(), id: z.string() });

// Block payloads, by type (vendor-apis/notion.md section 5).

export const textPayload = z.object({ rich_text: richTextArray });
export const headingPayload = z.object({
  rich_text: richTextArray,
  is_toggleable: z.boolean().optional(),
});
export const toDoPayload = z.object({ rich_text: richTextArray, checked: z.boolean() });
export const calloutPayload = z.object({
  rich_text: richTextArray,
  icon: z.object({ type: z.string(), emoji: z.string().optional() }).nullable().optional(),
});
export const codePayload = z.object({
  rich_text: richTextArray,
  caption: richTextArray.optional(),
  language: z.string(),
});
export const equationPayload = z.object({ expression: z.string() });
export const tablePayload = z.object({
  table_width: z.number(),
  has_column_header: z.boolean(),
  has_row_header: z.boolean(),
});
export const tableRowPayload = z.object({ cells: z.array(richTextArray) });
export const titlePayload = z.object({ title: z.string() });
export const linkToPagePayload = z.object({
  type: z.string(),
  page_id: z.string().optional(),
  database_id: z.string().optional(),
});
export const filePayload = z.object({
  type: z.string(),
  file: z.object({ url: z.string(), expiry_time: z.string().optional() }).optional(),
  external: z.object({ url: z.string() }).optional(),
  caption: richTextArray.optional(),
  name: z.string().optional(),
});
export const urlPayload = z.object({ url: z.string(), caption: richTextArray.optional() });
export const syncedBlockPayload = z.object({
  synced_from: z.object({ type: z.string(), block_id: z.string() }).nullable(),
});
