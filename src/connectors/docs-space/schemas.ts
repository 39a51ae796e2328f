/**
 * GitBook API v1 response shapes, with GitBook's own field names (vendor-apis/gitbook.md §4). Objects
 * let unknown fields through; a field is optional where the OpenAPI document says so or where this
 * connector can do without it.
 */
import { z } from 'zod';

/** `GET /v1/spaces/{spaceId}` (OAS `Space`), the fields the sync reads. */
export const spaceSchema = z.object({
  object: z.literal('space'),
  id: z.string(),
  title: z.string(),
  /** `public`, `unlisted`, `share-link`, `visitor-auth`, `in-collection` or `private`. */
  visibility: z.string(),
  /** Id of the space's active revision: the space-level change token. */
  revision: z.string(),
  urls: z.object({
    app: z.string(),
    location: z.string().optional(),
    published: z.string().optional(),
    public: z.string().optional(),
  }),
  updatedAt: z.string().optional(),
  deletedAt: z.string().optional(),
});
export type Space = z.infer<typeof spaceSchema>;

/**
 * `GET /v1/spaces/{spaceId}/revisions/{revisionId}/pages`: the whole page tree in one answer. Nodes are
 * read one by one ({@link pageNodeSchema} and the kinds below), so one malformed node is one failure
 * rather than an unreadable tree.
 */
export const revisionPagesSchema = z.object({ pages: z.array(z.unknown()) });

/** What every node of the tree must have before its kind is read. */
export const pageNodeSchema = z.object({
  id: z.string().min(1),
  type: z.string(),
  /** Children (documents, links, computed pages); absent on links. */
  pages: z.array(z.unknown()).optional(),
});

/**
 * A page with a body (`RevisionPageDocument`; `RevisionPageComputed` is served with the same fields
 * when the tree is listed with `computed=true`, the default).
 */
export const documentPageSchema = z.object({
  id: z.string().min(1),
  type: z.enum(['document', 'computed']),
  title: z.string(),
  slug: z.string().optional(),
  /** The page's full path in the revision, e.g. `getting-started/installation`. */
  path: z.string(),
  urls: z.object({ app: z.string() }).partial().optional(),
  description: z.string().optional(),
  /** Out of the navigation but still published: indexed like any page. */
  hidden: z.boolean().optional(),
  /** "Do not index in search / ask": not an item. */
  noIndex: z.boolean().optional(),
  createdAt: z.string().optional(),
  /** Only present once the page was edited. */
  updatedAt: z.string().optional(),
  /** Id of the page's body; absent for an empty page. */
  documentId: z.string().optional(),
  git: z.object({ oid: z.string().optional() }).optional(),
});
export type DocumentPage = z.infer<typeof documentPageSchema>;

/** A section header of the table of contents (`RevisionPageGroup`): no body, children only. */
export const groupPageSchema = z.object({
  id: z.string().min(1),
  type: z.literal('group'),
  title: z.string(),
  path: z.string().optional(),
});

/** `GET /v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}?format=markdown`. */
export const pageMarkdownSchema = z.object({
  id: z.string(),
  /** GitBook-flavoured markdown (`{% hint %}`, `{% tabs %}`...). */
  markdown: z.string(),
});
export type PageMarkdown = z.infer<typeof pageMarkdownSchema>;
