/**
 * `syncChanged` of `docs_space`: reads again what GitBook's change notifications named. An event names a
 * revision of the space (webhooks.ts), never a page, so each revision is expanded into the pages it
 * changed by GitBook's revision diff (`/revisions/{id}/changes`, against its parent). Those pages, and the
 * pages below them (a moved or renamed page changes its children's paths and tree trail), are read from
 * the space's *current* revision with the sync's rendering, version and publishing: the scheduled sync
 * that follows sees the same versions and fetches none of them again, and events handled out of order
 * still leave the current content.
 *
 * A page the diff names that is gone from the current tree (or now `noIndex`) is deleted. A diff that is
 * cut short (`more`), that names changes without pages (a reusable content, variables), or that cannot be
 * read (the revision unknown) re-reads every page of a space up to {@link BROAD_CHANGE_MAX_PAGES}; a larger
 * space leaves such a change to the scheduled sync, which compares every page's version.
 */
import { isSourceHttpError, isTransientSourceError } from '../http.ts';
import { mapInOrder } from '../toolkit/in-order.ts';
import type { ChangedDocument, ConnectorContext, SyncEvent } from '../types.ts';
import { type DocsSpaceCredentials, GitbookClient, spaceAccessError } from './client.ts';
import { readSpaceSites, resolvePublishing } from './publishing.ts';
import { expandReusable, ReusableIndex } from './reusable.ts';
import {
  DOCS_SPACE_TABLE,
  type Entry,
  pageEvent,
  readTree,
  reusableBodies,
  settle,
  spaceFacts,
} from './sync.ts';
import { DOCS_SPACE_REVISIONS } from './webhooks.ts';

/** Changes asked of one revision's diff; a merged change request may hold more (then: broad). */
export const REVISION_CHANGES_LIMIT = 100;

/** A change that names no pages re-reads every page of a space this small; a larger one waits for the schedule. */
export const BROAD_CHANGE_MAX_PAGES = 200;

/** Pages fetched at once, as the sync does. */
const CONCURRENCY = 4;

type ChangeEvent = SyncEvent<never>;

/** What the diffs of the named revisions ask for. */
interface Named {
  /** Pages to read again (created, edited, moved). */
  pages: Set<string>;
  /** Pages the diff says are gone (confirmed against the current tree). */
  gone: Set<string>;
  /** Paths (in the diffed revision) of pages and groups whose children are read again too. */
  paths: Set<string>;
  /** Something changed that names no page, or a diff was cut short or unreadable. */
  broad: boolean;
}

export async function* syncDocsSpaceChanged(
  ctx: ConnectorContext<DocsSpaceCredentials>,
  changes: readonly ChangedDocument[],
): AsyncGenerator<ChangeEvent> {
  const revisions = changes.filter((c) => c.table === DOCS_SPACE_REVISIONS).map((c) => c.externalId);
  const direct = changes.filter((c) => c.table === DOCS_SPACE_TABLE);
  if (revisions.length === 0 && direct.length === 0) return;

  const client = new GitbookClient(ctx);
  const space = await client.space();
  if (space.deletedAt) {
    throw new Error(
      `GitBook (docs_space): space ${ctx.credentials.space_id} was deleted at ${space.deletedAt}.`,
    );
  }
  const named = await readDiffs(client, revisions, ctx.credentials);
  for (const c of direct) (c.deleted ? named.gone : named.pages).add(c.externalId);

  const sites = await readSpaceSites(ctx, client, space);
  const facts = spaceFacts(space, await resolvePublishing(client, space, sites));
  const revision = space.revision;
  const content = await client.revision(revision);
  const tree = readTree(content.pages, facts, revision);
  const reusable = new ReusableIndex(content.reusableContents, revision);

  let todo = tree.entries.filter((e) => named.pages.has(e.page.id));
  if (named.broad) {
    if (tree.entries.length <= BROAD_CHANGE_MAX_PAGES) todo = tree.entries;
    else {
      ctx.log.info(
        { pages: tree.entries.length },
        'docs_space: a change that names no pages in a large space is left to the scheduled sync',
      );
    }
  }
  todo = withDescendants(todo, tree.entries, named.paths);

  for (const failure of tree.failures) {
    if (failure.kind === 'failure' && failure.externalId && named.pages.has(failure.externalId))
      yield failure;
  }
  let retry: Error | null = null;
  const bodies = reusableBodies(client, revision);
  const fetches = mapInOrder(todo, CONCURRENCY, (entry) =>
    settle(async () => {
      const page = await client.pageMarkdown(revision, entry.page.id);
      return { page, expanded: await expandReusable(page.markdown, reusable, bodies) };
    }),
  );
  for await (const [entry, result] of fetches) {
    ctx.signal.throwIfAborted();
    const event = pageEvent(ctx, { entry, result, facts, space, reusable });
    if (event.kind === 'failure' && event.retryable) retry = event.error;
    yield event;
  }

  // Only a complete tree proves a page gone, as in the sync.
  if (tree.complete) {
    for (const id of new Set([...named.gone, ...named.pages])) {
      if (!tree.present.has(id)) yield { kind: 'deleted', externalId: id, table: DOCS_SPACE_TABLE };
    }
  }
  // A page that failed for a passing cause: the revisions are read again later, whole.
  if (retry) {
    for (const id of revisions) {
      yield { kind: 'failure', externalId: id, table: DOCS_SPACE_REVISIONS, error: retry, retryable: true };
    }
  }
}

/** The pages each revision's diff names; a diff that cannot say it all makes the change broad. */
async function readDiffs(
  client: GitbookClient,
  revisions: readonly string[],
  credentials: DocsSpaceCredentials,
): Promise<Named> {
  const named: Named = { pages: new Set(), gone: new Set(), paths: new Set(), broad: false };
  for (const revision of new Set(revisions)) {
    let diff: Awaited<ReturnType<GitbookClient['revisionChanges']>>;
    try {
      diff = await client.revisionChanges(revision, REVISION_CHANGES_LIMIT);
    } catch (err) {
      // A transient failure puts the work back; a refusal of this revision (404, bad shape) is broad.
      if (!isSourceHttpError(err) || isTransientSourceError(err)) throw err;
      if (err.status === 401 || err.status === 403) throw spaceAccessError(err, credentials) ?? err;
      named.broad = true;
      continue;
    }
    if ((diff.more ?? 0) > 0) named.broad = true;
    for (const change of diff.changes) {
      const id = change.page?.id;
      if (!change.type.startsWith('page_') || !id) {
        if (!change.type.startsWith('file_') && !change.type.startsWith('tag_')) named.broad = true;
        continue;
      }
      const kind = change.page?.type;
      // A group's title or place is in its children's trail; a link is no item.
      if (change.type !== 'page_deleted' && change.page?.path) named.paths.add(change.page.path);
      if (kind === 'group' || kind === 'link') continue;
      (change.type === 'page_deleted' ? named.gone : named.pages).add(id);
    }
  }
  return named;
}

/** The entries and every entry below one of them or below one of `paths`, in tree order. */
function withDescendants(
  chosen: readonly Entry[],
  all: readonly Entry[],
  paths: ReadonlySet<string>,
): Entry[] {
  const ids = new Set(chosen.map((e) => e.page.id));
  const prefixes = [...chosen.map((e) => e.page.path), ...paths].map((p) => `${p.replace(/\/+$/, '')}/`);
  if (prefixes.length === 0) return [];
  return all.filter((e) => ids.has(e.page.id) || prefixes.some((p) => e.page.path.startsWith(p)));
}
