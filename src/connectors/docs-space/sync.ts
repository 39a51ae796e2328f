/**
 * The content sync of `docs_space`: one GitBook space, read from one revision at a time.
 *
 * - Publishing: the docs sites that contain the space decide the items' visibility and URLs
 *   (publishing.ts). Their listing is read every sync (one request); their structure only when the listing,
 *   the revision or the space changed, and at least daily ({@link SITES_RECHECK_MS}), since a site space or
 *   section turned draft changes nothing in the listing.
 * - Change detection, space level: the space's active `revision` plus the facts every item carries
 *   (visibility, URL base, title). The same revision and sites listing as the cursor's, after a pass that
 *   left nothing to retry, is two requests and no document.
 * - Change detection, page level: a new revision (its page tree and reusable contents, one request, not
 *   paginated) is walked in order; each page's version is a hash of its edit marker (`updatedAt`, else
 *   `createdAt`, plus `git.oid` and `documentId`), title, description, path and tree trail, and the space
 *   facts, plus the bodies of the reusable contents it included last time (reusable.ts). Only pages whose
 *   version differs from the stored one are fetched (`format=markdown`, from the same revision), and each
 *   reusable content they include is read once per pass.
 * - Deletion: a stored page absent from the complete tree, or now `noIndex`, is deleted. A tree with a
 *   node that cannot be identified deletes nothing in that pass.
 * - A reset (`full`) fetches every page and checkpoints every {@link CHECKPOINT_EVERY} pages, so a
 *   restarted job resumes within the same revision; the runner removes what the pass did not yield.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isSourceHttpError, isTransientSourceError } from '../http.ts';
import type { ConnectorContext, SourceDocument, SyncEvent, SyncOptions } from '../types.ts';
import { mapInOrder } from '../toolkit/in-order.ts';
import { knownById } from '../toolkit/known.ts';
import { type DocsSpaceCredentials, GitbookClient, spaceAccessError } from './client.ts';
import { type Publishing, readSpaceSites, resolvePublishing, type SpaceSites } from './publishing.ts';
import { renderPage } from './render.ts';
import {
  type Expanded,
  expandReusable,
  isCurrentVersion,
  ReusableIndex,
  reusableBody,
  versionWithReusable,
} from './reusable.ts';
import {
  type DocumentPage,
  documentPageSchema,
  groupPageSchema,
  type PageMarkdown,
  pageNodeSchema,
  type Space,
} from './schemas.ts';

export const DOCS_SPACE_TABLE = 'docs_space_pages';

/** Bump when rendering or item fields change, so every page is fetched again once. */
const FORMAT = 2;

/** The sites' structure (drafts, paths) is read again at least this often even when nothing else moved. */
export const SITES_RECHECK_MS = 24 * 60 * 60 * 1000;

/** Pages fetched at once; the documents are still yielded in tree order. */
const CONCURRENCY = 4;

/** A full pass checkpoints after this many pages. */
export const CHECKPOINT_EVERY = 100;

export const docsSpaceCursorSchema = z.object({
  /** The revision the pass read. */
  revision: z.string(),
  /** Fingerprint of the space facts every item carries (visibility, URLs, title) and of {@link FORMAT}. */
  space: z.string(),
  /** Fingerprint of the listing of the sites that contain the space (absent in cursors before sites). */
  sites: z.string().optional(),
  /** When the sites' structure was last read (epoch ms). */
  sitesCheckedAt: z.number().optional(),
  /**
   * False when a page failed for a transient cause (or the tree had an unidentifiable node): the next
   * sync walks the tree again even if the revision is the same, and fetches what is still missing.
   */
  settled: z.boolean(),
  /** A full pass in progress: the first `after` indexable pages of `revision` are done. */
  after: z.number().int().min(0).optional(),
});
export type DocsSpaceCursor = z.infer<typeof docsSpaceCursorSchema>;

type DocsEvent = SyncEvent<DocsSpaceCursor>;

/** What every item of the space shares. */
export interface SpaceFacts extends Publishing {
  title: string;
  key: string;
}

/** One indexable page of the tree, in order. */
export interface Entry {
  page: DocumentPage;
  /** Titles of the groups and pages above it. */
  trail: string[];
  version: string;
}

export async function* syncDocsSpace(
  ctx: ConnectorContext<DocsSpaceCredentials>,
  opts: SyncOptions<DocsSpaceCursor>,
): AsyncGenerator<DocsEvent> {
  const client = new GitbookClient(ctx);
  const space = await client.space();
  if (space.deletedAt) {
    throw new Error(
      `GitBook (docs_space): space ${ctx.credentials.space_id} was deleted at ${space.deletedAt}; its items are kept until the connection is removed or reset.`,
    );
  }
  const sites = await readSpaceSites(ctx, client, space);
  const sitesKey = digest([FORMAT, space.title, sitesSummary(sites)]);
  const cursor = opts.cursor;
  const full = opts.mode === 'full';
  const now = Date.now();
  const quiet = !full && cursor?.settled === true && cursor.after === undefined;

  // Nothing moved: same revision, same sites, their structure read recently.
  if (
    quiet &&
    cursor.revision === space.revision &&
    cursor.sites === sitesKey &&
    now - (cursor.sitesCheckedAt ?? 0) < SITES_RECHECK_MS
  ) {
    yield { kind: 'checkpoint', cursor };
    return;
  }
  const facts = spaceFacts(space, await resolvePublishing(client, space, sites));
  const stamp = { sites: sitesKey, sitesCheckedAt: now };
  if (quiet && cursor.revision === space.revision && cursor.space === facts.key) {
    yield {
      kind: 'checkpoint',
      cursor: { revision: space.revision, space: facts.key, settled: true, ...stamp },
    };
    return;
  }
  yield* walkRevision(ctx, client, opts, facts, { space, stamp });
}

/** Reads the revision's tree, fetches the pages whose version moved, and deletes what left the tree. */
async function* walkRevision(
  ctx: ConnectorContext<DocsSpaceCredentials>,
  client: GitbookClient,
  opts: SyncOptions<DocsSpaceCursor>,
  facts: SpaceFacts,
  at: { space: Space; stamp: { sites: string; sitesCheckedAt: number } },
): AsyncGenerator<DocsEvent> {
  const { space, stamp } = at;
  const cursor = opts.cursor;
  const full = opts.mode === 'full';
  // A restarted reset goes on in the revision it began with (old revisions stay readable), unless the
  // space facts changed meanwhile: then the pages done so far carry old facts and the pass starts over.
  const resume = full && cursor?.after !== undefined && cursor.space === facts.key ? cursor : undefined;
  let revision = resume?.revision ?? space.revision;
  let start = resume?.after ?? 0;
  let content: { pages: unknown[]; reusableContents: unknown[] };
  try {
    content = await client.revision(revision);
  } catch (err) {
    if (!resume) throw err;
    ctx.log.warn({ revision }, 'docs_space: the revision of the interrupted pass is gone; starting over');
    revision = space.revision;
    start = 0;
    content = await client.revision(revision);
  }

  const tree = readTree(content.pages, facts, revision);
  const reusable = new ReusableIndex(content.reusableContents, revision);
  let settled = (resume?.settled ?? true) && tree.complete;
  // A resumed pass reported the tree's failures when it began.
  if (start === 0) for (const failure of tree.failures) yield failure;

  const known = full ? null : await knownById(opts.known, ctx.signal, DOCS_SPACE_TABLE);
  const todo: Array<{ entry: Entry; index: number }> = [];
  tree.entries.forEach((entry, index) => {
    if (index < start) return;
    if (known && isCurrentVersion(known.get(entry.page.id)?.version, entry.version, reusable)) return;
    todo.push({ entry, index });
  });

  const bodies = reusableBodies(client, revision);
  const fetches = mapInOrder(todo, CONCURRENCY, ({ entry }) =>
    settle(async () => {
      const page = await client.pageMarkdown(revision, entry.page.id);
      return { page, expanded: await expandReusable(page.markdown, reusable, bodies) };
    }),
  );
  const base = { revision, space: facts.key, ...stamp };
  for await (const [{ entry, index }, result] of fetches) {
    ctx.signal.throwIfAborted();
    const event = pageEvent(ctx, { entry, result, facts, space, reusable });
    if (event.kind === 'failure' && event.retryable) settled = false;
    yield event;
    if (full && (index + 1) % CHECKPOINT_EVERY === 0 && index + 1 < tree.entries.length) {
      yield { kind: 'checkpoint', cursor: { ...base, settled, after: index + 1 } };
    }
  }

  if (known && tree.complete) {
    for (const id of known.keys()) {
      ctx.signal.throwIfAborted();
      if (!tree.present.has(id)) yield { kind: 'deleted', externalId: id, table: DOCS_SPACE_TABLE };
    }
  }
  yield { kind: 'checkpoint', cursor: { ...base, settled } };
}

/**
 * The bodies of reusable contents as markdown, each read at most once per pass (pages fetched at once
 * share the read). A body that is gone (404) is undefined; other errors fail the pages that include it.
 */
export function reusableBodies(
  client: GitbookClient,
  revision: string,
): (id: string) => Promise<string | undefined> {
  const cache = new Map<string, Promise<string | undefined>>();
  return (id) => {
    let body = cache.get(id);
    if (!body) {
      body = client.reusableDocument(revision, id).then(
        (doc) => reusableBody(doc.nodes),
        (err: unknown) => {
          if (isSourceHttpError(err) && err.kind === 'status' && err.status === 404) return undefined;
          cache.delete(id);
          throw err;
        },
      );
      cache.set(id, body);
    }
    return body;
  };
}

// ---------------------------------------------------------------------------------------------------
// The space and the tree
// ---------------------------------------------------------------------------------------------------

/** The facts every item carries: the publishing the sites give, and the space's title. */
export function spaceFacts(space: Space, publishing: Publishing): SpaceFacts {
  const { visibility, base } = publishing;
  return { visibility, base, title: space.title, key: digest([FORMAT, visibility, base, space.title]) };
}

/** What the sites listing says about the space's publishing, in a stable order. */
function sitesSummary(sites: SpaceSites): unknown {
  if (sites === 'unreadable') return sites;
  return sites
    .map((s) => [s.id, s.visibility, s.published, s.urls?.published ?? null, s.siteSpaces ?? null])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

export interface Tree {
  /** The indexable pages in tree order (pre-order: a page before its children). */
  entries: Entry[];
  /** Ids that keep their item: indexable pages and pages whose node could not be read. */
  present: Set<string>;
  failures: DocsEvent[];
  /** False when a node had no readable id: what it was cannot be told, so nothing is deleted. */
  complete: boolean;
}

export function readTree(nodes: unknown[], facts: SpaceFacts, revision: string): Tree {
  const tree: Tree = { entries: [], present: new Set(), failures: [], complete: true };
  const visit = (list: unknown[], trail: string[]) => {
    for (const raw of list) {
      const node = pageNodeSchema.safeParse(raw);
      if (!node.success) {
        tree.complete = false;
        tree.failures.push({
          kind: 'failure',
          error: new Error('GitBook listed a page without an id in the page tree'),
          retryable: false,
        });
        continue;
      }
      const { id, type, pages } = node.data;
      let title: string | undefined;
      if (type === 'document' || type === 'computed') {
        const page = documentPageSchema.safeParse(raw);
        if (!page.success) {
          const rawTitle = (raw as { title?: unknown }).title;
          if (typeof rawTitle === 'string') title = rawTitle;
          tree.present.add(id);
          tree.failures.push({
            kind: 'failure',
            externalId: id,
            table: DOCS_SPACE_TABLE,
            error: new Error(
              `GitBook page ${id} has an unexpected shape in the page tree: ${z.prettifyError(page.error).replace(/\s+/g, ' ')}`,
            ),
            retryable: false,
          });
        } else {
          title = page.data.title;
          if (!page.data.noIndex && !tree.present.has(id)) {
            tree.present.add(id);
            tree.entries.push({
              page: page.data,
              trail,
              version: pageVersion(page.data, trail, facts, revision),
            });
          }
        }
      } else if (type === 'group') {
        title = groupPageSchema.safeParse(raw).data?.title;
      }
      // Links and kinds unknown to us are not items; their children (if any) still are.
      if (pages?.length) visit(pages, title ? [...trail, title] : trail);
    }
  };
  visit(nodes, []);
  return tree;
}

/** Changes when the page's content, title, description or place in the tree, or the space facts, change. */
function pageVersion(page: DocumentPage, trail: string[], facts: SpaceFacts, revision: string): string {
  const edited = page.updatedAt ?? page.createdAt;
  const marker = [edited, page.git?.oid, page.documentId].filter(Boolean);
  // A page with no edit marker at all could have changed in any new revision.
  if (marker.length === 0) marker.push(`revision:${revision}`);
  return digest([facts.key, marker, page.title, page.description ?? null, page.path, trail]);
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 32);
}

// ---------------------------------------------------------------------------------------------------
// Pages
// ---------------------------------------------------------------------------------------------------

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export async function settle<T>(fn: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

export interface PageResult {
  entry: Entry;
  result: Settled<{ page: PageMarkdown; expanded: Expanded }>;
  facts: SpaceFacts;
  space: Space;
  reusable: ReusableIndex;
}

export function pageEvent(ctx: ConnectorContext<DocsSpaceCredentials>, at: PageResult): SyncEvent<never> {
  const { entry, result, facts, space, reusable } = at;
  const { page, trail } = entry;
  if (!result.ok) {
    const err = result.error;
    if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
    if (!isSourceHttpError(err)) throw err;
    // A page 404 is the page's own problem (gone between listing and reading); 401/403 are the space's.
    if (err.status === 401 || err.status === 403) throw spaceAccessError(err, ctx.credentials) ?? err;
    // A page that vanished between the tree and its read (404) is read again once the tree settles.
    const retryable = isTransientSourceError(err) || err.status === 404;
    return { kind: 'failure', externalId: page.id, table: DOCS_SPACE_TABLE, error: err, retryable };
  }
  const { expanded } = result.value;
  if (expanded.unmatched.length > 0) {
    // GitBook named content this revision does not list: the page is indexed without it.
    ctx.log.warn(
      { page: page.id, includes: expanded.unmatched.length },
      'docs_space: a page includes content the revision does not list',
    );
  }
  let markdown: string;
  try {
    markdown = renderPage(expanded.markdown, {
      title: page.title,
      trail,
      description: page.description,
    });
  } catch (err) {
    return {
      kind: 'failure',
      externalId: page.id,
      table: DOCS_SPACE_TABLE,
      error: new Error(`GitBook page ${page.id} could not be rendered: ${(err as Error).message}`),
      retryable: false,
    };
  }
  const doc: SourceDocument = {
    externalId: page.id,
    title: page.title,
    url: pageUrl(page, facts, space),
    markdown,
    visibility: facts.visibility,
    tags: pageTags(space.title, trail),
    table: DOCS_SPACE_TABLE,
    version: versionWithReusable(entry.version, expanded.used, reusable),
  };
  const updatedAt = page.updatedAt ?? page.createdAt;
  if (updatedAt) doc.updatedAt = updatedAt;
  return { kind: 'document', doc };
}

/** Published: the site space's URL plus the page path. Otherwise the page in the GitBook app. */
function pageUrl(page: DocumentPage, facts: SpaceFacts, space: Space): string {
  const relative = page.path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
  if (facts.base === null) {
    if (page.urls?.app) return page.urls.app;
    return new URL(relative, space.urls.app.endsWith('/') ? space.urls.app : `${space.urls.app}/`).href;
  }
  // Relative to the base, so a site space under a sub-path (`acme.gitbook.io/docs/v2/`) keeps it.
  return new URL(relative, facts.base).href;
}

/**
 * `docs_space`, the space title, and the title of each group and page above the page (its sections: a
 * search can be narrowed to "Getting started"). Not the page's own title: it labels one item only.
 */
function pageTags(spaceTitle: string, trail: string[]): string[] {
  const tags = ['docs_space', spaceTitle, ...trail].map((t) => t.replace(/\s+/g, ' ').trim()).filter(Boolean);
  return [...new Set(tags)];
}
