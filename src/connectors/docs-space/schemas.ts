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
  /** Id of the organization that owns the space: where its docs sites are listed. */
  organization: z.string().optional(),
});
export type Space = z.infer<typeof spaceSchema>;

/**
 * `GET /v1/orgs/{org}/sites` items (OAS `Site`). Publishing belongs to sites: `visibility` is the audience
 * (`public`, `unlisted`, `share-link`, `visitor-auth`) and `published` whether the site is live at all.
 */
export const siteSchema = z.object({
  object: z.literal('site'),
  id: z.string().min(1),
  title: z.string().optional(),
  visibility: z.string(),
  published: z.boolean(),
  /** How many site spaces the site has. */
  siteSpaces: z.number().optional(),
  urls: z.object({ published: z.string().optional() }).optional(),
});
export type Site = z.infer<typeof siteSchema>;

/** A GitBook list page (`List`): `next` is absent on the last page. */
export const siteListSchema = z.object({
  items: z.array(siteSchema),
  next: z.object({ page: z.string().min(1) }).optional(),
});

/** OAS `SiteSpace`: one space's place in a site. `urls.published` only while the site is published. */
export const siteSpaceSchema = z.object({
  object: z.literal('site-space'),
  id: z.string(),
  space: z.object({ id: z.string() }),
  path: z.string().optional(),
  default: z.boolean().optional(),
  /** A draft site space is not live. */
  draft: z.boolean().optional(),
  urls: z.object({ published: z.string().optional() }).optional(),
});
export type SiteSpace = z.infer<typeof siteSpaceSchema>;

/**
 * `GET /v1/orgs/{org}/sites/{siteId}/structure` (OAS `SiteStructure`): site spaces at the top, or sections
 * (and section groups) holding them, each with its own `draft`. Nodes are read one by one.
 */
export const siteStructureSchema = z.object({
  type: z.string(),
  structure: z.array(z.unknown()),
});

/** A node of a site's structure: a section, a section group, an external link or a site space. */
export const siteNodeSchema = z.object({
  object: z.string(),
  draft: z.boolean().optional(),
  siteSpaces: z.array(z.unknown()).optional(),
  children: z.array(z.unknown()).optional(),
  sections: z.array(z.unknown()).optional(),
});

/**
 * `GET /v1/spaces/{spaceId}/revisions/{revisionId}` (OAS `RevisionBase`): the page tree and the reusable
 * contents of one revision, in one answer.
 */
export const revisionSchema = z.object({
  pages: z.array(z.unknown()),
  reusableContents: z.array(z.unknown()).optional(),
});

/** OAS `RevisionReusableContent`: a block of content that pages include by reference. */
export const reusableContentSchema = z.object({
  id: z.string().min(1),
  title: z.string(),
  /** Id of the body; a new body (an edit) gives a new id. Absent: empty. */
  document: z.string().optional(),
  git: z.object({ oid: z.string().optional(), path: z.string().optional() }).optional(),
});
export type ReusableContent = z.infer<typeof reusableContentSchema>;

/** OAS `JSONDocument` (the body of a reusable content); its nodes are read tolerantly by document.ts. */
export const jsonDocumentSchema = z.object({
  object: z.literal('document'),
  nodes: z.array(z.unknown()),
});
export type JsonDocument = z.infer<typeof jsonDocumentSchema>;

/*
 * The page tree of a revision ({@link revisionSchema}) is read node by node ({@link pageNodeSchema} and the
 * kinds below), so one malformed node is one failure rather than an unreadable tree.
 */

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

/**
 * `GET /v1/spaces/{spaceId}/revisions/{revisionId}/changes` (OAS `getRevisionSemanticChanges`): what the
 * revision changed against its parent. Page changes (`page_created`, `page_edited`, `page_deleted`,
 * `page_moved`) name their page; the others (files, reusable contents, variables, tags) name none. `more`
 * counts the changes left out above `limit`.
 */
export const revisionChangesSchema = z.object({
  changes: z.array(
    z.looseObject({
      type: z.string(),
      page: z
        .looseObject({ id: z.string().min(1), type: z.string().optional(), path: z.string().optional() })
        .optional(),
    }),
  ),
  more: z.number().optional(),
});
export type RevisionChanges = z.infer<typeof revisionChangesSchema>;
