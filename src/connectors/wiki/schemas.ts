/**
 * Confluence Cloud REST API v2 response shapes (the OpenAPI document's `SpaceBulk`, `PageBulk`,
 * `BlogPostBulk`, `PageSingle`, `Version`, `MultiEntityLinks`), with the vendor's field names. Objects
 * are open (`z.object`) so fields Atlassian adds pass; what the spec marks optional or nullable is so here.
 */
import { z } from 'zod';

/** `MultiEntityLinks`: `next` is relative to the site origin (`/wiki/api/v2/...`); `base` ends in `/wiki`. */
const multiEntityLinksSchema = z.object({
  next: z.string().optional(),
  base: z.string().optional(),
});

export const spaceSchema = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  type: z.string().optional(),
  /** `current` or `archived`. */
  status: z.string().optional(),
  homepageId: z.string().nullish(),
  _links: z.object({ webui: z.string().optional() }).optional(),
});
export type Space = z.infer<typeof spaceSchema>;

export const spacesPageSchema = z.object({
  results: z.array(spaceSchema),
  _links: multiEntityLinksSchema.optional(),
});

/**
 * A listing page of pages or blog posts, its records unparsed: one record that does not match
 * {@link contentSummarySchema} is that document's failure, not the listing's.
 */
export const contentListPageSchema = z.object({
  results: z.array(z.unknown()),
  _links: multiEntityLinksSchema.optional(),
});
export type ContentListPage = z.infer<typeof contentListPageSchema>;

/** `Version`: `number` grows with every edit; `createdAt` is the time of that edit. */
const versionSchema = z.object({
  number: z.number().int(),
  createdAt: z.string().optional(),
  message: z.string().optional(),
  minorEdit: z.boolean().optional(),
  authorId: z.string().optional(),
});

const contentLinksSchema = z.object({
  webui: z.string().optional(),
  editui: z.string().optional(),
  tinyui: z.string().optional(),
  /** Only on single-object answers: the site's `https://<host>/wiki`. */
  base: z.string().optional(),
});

/**
 * One page or blog post of a listing without `body-format` (`PageBulk` / `BlogPostBulk`). Blog posts have
 * no `parentId`.
 */
export const contentSummarySchema = z.object({
  id: z.string(),
  /** `current`, `archived`, `trashed`, `deleted`, `draft`, `historical`. */
  status: z.string(),
  title: z.string(),
  spaceId: z.string(),
  parentId: z.string().nullish(),
  parentType: z.string().nullish(),
  createdAt: z.string().optional(),
  version: versionSchema,
  _links: contentLinksSchema.optional(),
});

/** `{"representation":"storage","value":"<p>…</p>"}` */
const bodyRepresentationSchema = z.object({
  representation: z.string().optional(),
  value: z.string(),
});

/** `GET /pages/{id}?body-format=storage` (`PageSingle`), and the same for blog posts. */
export const contentWithBodySchema = contentSummarySchema.extend({
  body: z
    .object({
      storage: bodyRepresentationSchema.optional(),
    })
    .optional(),
});
export type ContentWithBody = z.infer<typeof contentWithBodySchema>;
