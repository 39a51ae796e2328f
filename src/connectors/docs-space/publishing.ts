/**
 * Where and to whom a space is published. Since GitBook's docs sites (August 2024) a space's own
 * `visibility` and `urls.published` no longer say it: publishing belongs to the site(s) that contain the
 * space. A space's pages are public when the space is live in a published site whose audience is anyone
 * (`public`, or `unlisted`: open to anyone with the URL, only kept out of search engines), and then link
 * to that site.
 *
 * The other audiences give private items:
 * - `visitor-auth`: readers sign in through the customer's own identity provider, so the site's URL is
 *   where they read it: items link there.
 * - `share-link`: the site opens only with a secret token in its URL, which an item must never carry, so
 *   items link to the page in the GitBook app.
 * - not in any live site (unpublished site, draft site space or section), or sites not readable with the
 *   token: private, in the GitBook app. Never public on a guess.
 */
import { isSourceHttpError } from '../http.ts';
import type { ConnectorContext } from '../types.ts';
import { type DocsSpaceCredentials, type GitbookClient, spaceAccessError } from './client.ts';
import { type Site, type Space, siteNodeSchema, siteSpaceSchema } from './schemas.ts';

/** How the space's items are published. */
export interface Publishing {
  visibility: 'public' | 'private';
  /** Base of page URLs with a trailing slash; null: each page's GitBook app URL. */
  base: string | null;
}

/** The sites that contain the space, or `unreadable` when the token may not list them. */
export type SpaceSites = Site[] | 'unreadable';

const PRIVATE_IN_APP: Publishing = { visibility: 'private', base: null };

/** Best audience first: the one an item is shown under when the space is live in several sites. */
const AUDIENCE_RANK: Record<string, number> = { public: 0, unlisted: 1, 'visitor-auth': 2, 'share-link': 3 };

/**
 * The organization's sites that contain the space. A 401 is the token's (the sync stops); a 403 or 404
 * means the token's user may read the space but not the organization's sites: `unreadable`.
 */
export async function readSpaceSites(
  ctx: ConnectorContext<DocsSpaceCredentials>,
  client: GitbookClient,
  space: Space,
): Promise<SpaceSites> {
  if (!space.organization) return 'unreadable';
  try {
    return await client.sitesOfSpace(space.organization);
  } catch (err) {
    if (!isSourceHttpError(err) || err.kind !== 'status') throw err;
    if (err.status === 401) throw spaceAccessError(err, ctx.credentials) ?? err;
    if (err.status !== 403 && err.status !== 404) throw err;
    ctx.log.warn(
      { status: err.status },
      "docs_space: the token cannot list the organization's docs sites; the space's pages are indexed as private",
    );
    return 'unreadable';
  }
}

/** A live place of the space in a site. */
interface Placement {
  site: Site;
  url: string;
  isDefault: boolean;
}

/**
 * Decides the space's publishing from its sites, reading the structure (sections, site spaces, drafts)
 * of each published site that holds it: one request per such site.
 */
export async function resolvePublishing(
  client: GitbookClient,
  space: Space,
  sites: SpaceSites,
): Promise<Publishing> {
  if (sites === 'unreadable' || !space.organization) return PRIVATE_IN_APP;
  const placements: Placement[] = [];
  const live = sites.filter((s) => s.published && AUDIENCE_RANK[s.visibility] !== undefined);
  for (const site of live.sort((a, b) => a.id.localeCompare(b.id))) {
    const structure = await client.siteStructure(space.organization, site.id);
    for (const entry of liveSiteSpaces(structure.structure, space.id)) {
      placements.push({ site, ...entry });
    }
  }
  placements.sort(
    (a, b) =>
      AUDIENCE_RANK[a.site.visibility]! - AUDIENCE_RANK[b.site.visibility]! ||
      Number(b.isDefault) - Number(a.isDefault),
  );
  const best = placements[0];
  if (!best) return PRIVATE_IN_APP;
  switch (best.site.visibility) {
    case 'public':
    case 'unlisted':
      return { visibility: 'public', base: withSlash(best.url) };
    case 'visitor-auth':
      return { visibility: 'private', base: withSlash(best.url) };
    default:
      return PRIVATE_IN_APP;
  }
}

/** The space's site spaces in a structure that are live (no draft on them or above them), with URLs. */
function liveSiteSpaces(nodes: unknown[], spaceId: string): Array<{ url: string; isDefault: boolean }> {
  const out: Array<{ url: string; isDefault: boolean }> = [];
  const walk = (list: unknown[], draftAbove: boolean) => {
    for (const raw of list) {
      const siteSpace = siteSpaceSchema.safeParse(raw);
      if (siteSpace.success) {
        const { data } = siteSpace;
        const url = data.urls?.published;
        if (!draftAbove && !data.draft && data.space.id === spaceId && url) {
          out.push({ url, isDefault: data.default === true });
        }
        continue;
      }
      const node = siteNodeSchema.safeParse(raw);
      if (!node.success) continue;
      const draft = draftAbove || node.data.draft === true;
      walk([...(node.data.siteSpaces ?? []), ...(node.data.children ?? node.data.sections ?? [])], draft);
    }
  };
  walk(nodes, false);
  return out;
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
