/**
 * The re-read of exactly the pages and blog posts a change notification named (webhooks.ts), made the
 * way the sync makes them (sync.ts): the same body request, the same markdown, URL, tags and change
 * token, so the scheduled sync that follows finds them unchanged and neither fetches nor rewrites them.
 *
 * What the listing gives the sync for free is read here per document: its space (`GET /spaces/{id}`, key,
 * name and whether it is current) and, for a page, its parent's title (`GET /pages/{id}` without a body),
 * each once per call however many documents share it. A document that answers 404 (purged, or restricted
 * from this account), is no longer current (trashed, archived, a draft) or sits in a space that is not
 * current is `deleted`, as the sync's listing would conclude.
 */
import { z } from 'zod';
import type { ChangedDocument, ConnectorContext, SyncEvent } from '../types.ts';
import { type ContentKind, fetchContent, fetchSpace, type WikiCredentials } from './client.ts';
import { spaceSchema } from './schemas.ts';
import {
  type ContentTarget,
  contentOutcome,
  KINDS,
  PAGES_TABLE,
  type PassState,
  readFailure,
} from './sync.ts';

type Ctx = ConnectorContext<WikiCredentials>;

/** What locating a fetched page or blog post needs from its body. */
const placedSchema = z.object({
  spaceId: z.string(),
  parentId: z.string().nullish(),
  _links: z.object({ base: z.string().optional() }).optional(),
});
const parentSchema = z.object({ title: z.string(), status: z.string(), spaceId: z.string() });

export async function* syncWikiChanges(
  ctx: Ctx,
  changes: readonly ChangedDocument[],
): AsyncGenerator<SyncEvent<never>> {
  const state: PassState = { spaces: new Map(), pageTitles: new Map(), wikiBase: `${ctx.baseUrl}/wiki` };
  const looked = { spaces: new Set<string>(), parents: new Set<string>() };
  const seen = new Set<string>();
  for (const change of changes) {
    const kind = KINDS.find((k) => k.table === change.table);
    const key = `${change.table}\u0000${change.externalId}`;
    if (!kind || seen.has(key)) continue;
    seen.add(key);
    ctx.signal.throwIfAborted();
    const target: ContentTarget = { table: kind.table, noun: kind.noun, id: change.externalId };
    yield* await readOne(ctx, state, looked, { target, kind: kind.kind });
  }
}

async function readOne(
  ctx: Ctx,
  state: PassState,
  looked: { spaces: Set<string>; parents: Set<string> },
  doc: { target: ContentTarget; kind: ContentKind },
): Promise<SyncEvent<never>[]> {
  const { target } = doc;
  try {
    const got = await fetchContent(ctx, doc.kind, target.id);
    // Purged, or restricted from this account: gone for this connection either way.
    if (!got.found) return [{ kind: 'deleted', externalId: target.id, table: target.table }];
    const placed = placedSchema.safeParse(got.body);
    if (placed.success) {
      const base = placed.data._links?.base;
      if (base) state.wikiBase = base.replace(/\/+$/, '');
      await learnSpace(ctx, state, looked.spaces, placed.data.spaceId);
      const parentId = target.table === PAGES_TABLE ? placed.data.parentId : null;
      if (parentId) await learnParent(ctx, state, looked, parentId);
    }
    return withoutCheckpoints(contentOutcome(state, target, got.body).events);
  } catch (err) {
    return withoutCheckpoints(readFailure(ctx, target, err).events);
  }
}

/** The space's key and name, when it is current (the sync knows only current spaces). */
async function learnSpace(ctx: Ctx, state: PassState, looked: Set<string>, spaceId: string): Promise<void> {
  if (looked.has(spaceId)) return;
  looked.add(spaceId);
  const got = await fetchSpace(ctx, spaceId);
  if (!got.found) return;
  const space = spaceSchema.safeParse(got.body);
  if (space.success && (space.data.status ?? 'current') === 'current') {
    state.spaces.set(spaceId, { key: space.data.key, name: space.data.name });
  }
}

/**
 * The parent page's title, when the sync would know it: a current page in a current space (the sync's
 * titles come from its listing of those). Its space is read first when it is another one.
 */
async function learnParent(
  ctx: Ctx,
  state: PassState,
  looked: { spaces: Set<string>; parents: Set<string> },
  parentId: string,
): Promise<void> {
  if (looked.parents.has(parentId)) return;
  looked.parents.add(parentId);
  const got = await fetchContent(ctx, 'pages', parentId, { withBody: false });
  if (!got.found) return;
  const parent = parentSchema.safeParse(got.body);
  if (!parent.success || parent.data.status !== 'current') return;
  await learnSpace(ctx, state, looked.spaces, parent.data.spaceId);
  if (!state.spaces.has(parent.data.spaceId)) return;
  state.pageTitles.set(parentId, parent.data.title);
}

/** A change's events carry no checkpoint; the sync's `Outcome` type allows them, these never have one. */
function withoutCheckpoints(events: SyncEvent<unknown>[]): SyncEvent<never>[] {
  return events.filter((e): e is SyncEvent<never> => e.kind !== 'checkpoint');
}
