/**
 * The docs sites of the fake GitBook organization (vendor-apis/gitbook.md, "Docs sites own publishing"):
 * since August 2024 a space's publishing state, audience and URLs belong to the site(s) that contain it.
 *
 * Modelled from GitBook's OpenAPI (`listSites`, `getSiteById`, `listSiteSpaces`, `getSiteStructure`):
 * - `GET /v1/orgs/{org}/sites`: `page`/`limit` (≤ 1000) pagination with `next.page` omitted on the last
 *   page and `count`; filters `space` (sites containing that space), `published`, `title`.
 * - `Site`: `visibility` (`public`, `unlisted`, `share-link`, `visitor-auth`; no `private`: an unpublished
 *   site has `published: false`), `urls.published` only while published, `siteSpaces` as a count.
 * - `GET .../sites/{siteId}/site-spaces`: paginated `SiteSpace` items with the full `Space`, `path`,
 *   `default`, `draft`, `section`, and `urls.published` only while the site is published.
 * - `GET .../sites/{siteId}/structure`: `{type: "sections"}` with each section's `draft` and its site
 *   spaces, or `{type: "siteSpaces"}` for a site without sections.
 * - An organization the token's user is not a member of answers 403.
 *
 * Not modelled: section groups and external links in the structure, `shareKey` (accepted and ignored),
 * site-space conditions and localized titles, visitor-auth settings, custom hostnames beyond the URL the
 * test gives. How GitBook composes a site space's published URL from the site, section and site-space
 * paths is not documented; the fake uses site URL + non-default section path + non-default site-space path.
 */
export type FakeSiteVisibility = 'public' | 'unlisted' | 'share-link' | 'visitor-auth';

export interface FakeGitbookSiteSpace {
  id: string;
  spaceId: string;
  /** Path of the space on the site (its variant or version), e.g. `v2`. */
  path: string;
  default?: boolean;
  draft?: boolean;
  /** Id of the section holding it, when the site has sections. */
  section?: string;
  title?: string;
}

export interface FakeGitbookSection {
  id: string;
  title: string;
  path: string;
  default?: boolean;
  draft?: boolean;
}

export interface FakeGitbookSite {
  id: string;
  title: string;
  visibility: FakeSiteVisibility;
  published: boolean;
  /** The site's published root, e.g. `https://docs.acme.com/`. */
  url: string;
  /** Present: the site is organised in sections (its structure is `sections`). */
  sections?: FakeGitbookSection[];
  siteSpaces: FakeGitbookSiteSpace[];
}

export const GITBOOK_ORG_ID = 'Xk3Pq9wLmN2Rt5Vb8Yz1';
export const GITBOOK_SITE_ID = 'site_acmeDocs01';

/** The default: one public, published site whose default (and only) site space is the fake space. */
export function defaultGitbookSites(spaceId: string, url: string): FakeGitbookSite[] {
  return [
    {
      id: GITBOOK_SITE_ID,
      title: 'Acme Docs',
      visibility: 'public',
      published: true,
      url,
      siteSpaces: [{ id: 'sitesp_product01', spaceId, path: 'product-docs', default: true, title: 'Docs' }],
    },
  ];
}

/** Answers from the fake's organization routes. */
export type SiteReply = { status: number; body: unknown };

export interface SiteRouteContext {
  sites: FakeGitbookSite[];
  /** The full `Space` JSON of a space id (the fake's own space, or a stub for others). */
  spaceJson: (spaceId: string) => Record<string, unknown>;
}

const APP = 'https://app.gitbook.com';

/** Routes `/v1/orgs/{org}/sites...` (the org already checked); undefined for a path it does not know. */
export function replySites(
  path: string,
  query: URLSearchParams,
  org: string,
  ctx: SiteRouteContext,
): SiteReply | undefined {
  const m = /^\/sites(?:\/([^/]+)(?:\/(site-spaces|structure))?)?$/.exec(path);
  if (!m) return undefined;
  if (m[1] === undefined) {
    let sites = ctx.sites;
    const space = query.get('space');
    if (space) sites = sites.filter((s) => s.siteSpaces.some((ss) => ss.spaceId === space));
    const published = query.get('published');
    if (published !== null) sites = sites.filter((s) => String(s.published) === published);
    const title = query.get('title');
    if (title) sites = sites.filter((s) => s.title.includes(title));
    return paginate(
      sites.map((s) => siteJson(s, org)),
      query,
    );
  }
  const site = ctx.sites.find((s) => s.id === decodeURIComponent(m[1]!));
  if (!site) return { status: 404, body: { error: { code: 404, message: 'Site not found' } } };
  if (m[2] === undefined) return { status: 200, body: siteJson(site, org) };
  if (m[2] === 'site-spaces') {
    let items = site.siteSpaces;
    if (query.get('default') === 'true') items = items.filter((ss) => ss.default);
    return paginate(
      items.map((ss) => siteSpaceJson(site, ss, ctx)),
      query,
    );
  }
  return { status: 200, body: structureJson(site, ctx) };
}

function paginate(all: unknown[], query: URLSearchParams): SiteReply {
  const limitParam = query.get('limit');
  const limit = limitParam === null ? 20 : Number(limitParam);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    return { status: 400, body: { error: { code: 400, message: 'limit must be between 1 and 1000' } } };
  }
  const offset = query.get('page') ? Number(Buffer.from(query.get('page')!, 'base64url').toString()) : 0;
  const items = all.slice(offset, offset + limit);
  const next =
    offset + limit < all.length
      ? { page: Buffer.from(String(offset + limit)).toString('base64url') }
      : undefined;
  return { status: 200, body: { items, ...(next ? { next } : {}), count: all.length } };
}

function siteJson(site: FakeGitbookSite, org: string): Record<string, unknown> {
  return {
    object: 'site',
    id: site.id,
    type: 'basic',
    title: site.title,
    visibility: site.visibility,
    published: site.published,
    siteSpaces: site.siteSpaces.length,
    createdAt: '2024-08-05T09:00:00.000Z',
    urls: {
      location: `https://api.gitbook.com/v1/orgs/${org}/sites/${site.id}`,
      app: `${APP}/o/${org}/sites/${site.id}`,
      preview: `https://acme.gitbook.io/preview/${site.id}`,
      ...(site.published ? { published: site.url } : {}),
    },
  };
}

function siteSpaceUrl(site: FakeGitbookSite, ss: FakeGitbookSiteSpace): string {
  const section = site.sections?.find((s) => s.id === ss.section);
  const parts = [section && !section.default ? section.path : '', ss.default ? '' : ss.path].filter(Boolean);
  if (parts.length === 0) return site.url;
  return `${site.url.replace(/\/+$/, '')}/${parts.join('/')}`;
}

function siteSpaceJson(
  site: FakeGitbookSite,
  ss: FakeGitbookSiteSpace,
  ctx: SiteRouteContext,
): Record<string, unknown> {
  return {
    object: 'site-space',
    id: ss.id,
    path: ss.path,
    ...(ss.section ? { section: ss.section } : {}),
    space: ctx.spaceJson(ss.spaceId),
    title: ss.title ?? ss.path,
    default: ss.default ?? false,
    draft: ss.draft ?? false,
    urls: site.published ? { published: siteSpaceUrl(site, ss) } : {},
  };
}

function structureJson(site: FakeGitbookSite, ctx: SiteRouteContext): Record<string, unknown> {
  if (!site.sections) {
    return { type: 'siteSpaces', structure: site.siteSpaces.map((ss) => siteSpaceJson(site, ss, ctx)) };
  }
  return {
    type: 'sections',
    structure: site.sections.map((section) => ({
      object: 'site-section',
      id: section.id,
      title: section.title,
      path: section.path,
      default: section.default ?? false,
      draft: section.draft ?? false,
      siteSpaces: site.siteSpaces
        .filter((ss) => ss.section === section.id)
        .map((ss) => siteSpaceJson(site, ss, ctx)),
      urls: site.published
        ? { published: section.default ? site.url : `${site.url.replace(/\/+$/, '')}/${section.path}` }
        : {},
    })),
  };
}
