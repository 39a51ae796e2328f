/**
 * The GitBook calls of `docs_space`: paths, Bearer auth, and what a refusal of the space itself means.
 * Everything is read from one revision (`/revisions/{id}/...`), so a sync sees one consistent snapshot
 * even while people edit the space.
 */
import type { AppError } from '../../lib/errors.ts';
import { joinUrl, pathSegment } from '../base-url.ts';
import { sourceRefusal } from '../credential-check.ts';
import { isSourceHttpError } from '../http.ts';
import type { ConnectorContext } from '../types.ts';
import {
  type JsonDocument,
  jsonDocumentSchema,
  type PageMarkdown,
  pageMarkdownSchema,
  type RevisionChanges,
  revisionChangesSchema,
  revisionSchema,
  type Site,
  siteListSchema,
  siteStructureSchema,
  type Space,
  spaceSchema,
} from './schemas.ts';

/** Sites asked for per list request; GitBook allows up to 1000. */
export const SITES_PER_PAGE = 100;

export const DOCS_SPACE_SOURCE = { type: 'docs_space', alias: 'gitbook', label: 'GitBook' } as const;

export interface DocsSpaceCredentials {
  access_token: string;
  /** GitBook ids are `[A-Za-z0-9_-]+`; anything else is refused, as it would alter the request path. */
  space_id: string;
  /** The secret GitBook's Webhook integration signs this space's events with, when the caller gave it. */
  webhook_secret?: string;
}

export function gitbookHeaders(creds: DocsSpaceCredentials): Record<string, string> {
  return { authorization: `Bearer ${creds.access_token}` };
}

export class GitbookClient {
  readonly #ctx: ConnectorContext<DocsSpaceCredentials>;
  readonly #headers: Record<string, string>;
  readonly #space: string;

  constructor(ctx: ConnectorContext<DocsSpaceCredentials>) {
    this.#ctx = ctx;
    this.#headers = gitbookHeaders(ctx.credentials);
    this.#space = `/v1/spaces/${pathSegment(ctx.credentials.space_id)}`;
  }

  /** The space: its active revision, visibility, title and URLs. Refusals become {@link spaceAccessError}. */
  async space(): Promise<Space> {
    try {
      return await this.#ctx.http.getJson(joinUrl(this.#ctx.baseUrl, this.#space), spaceSchema, {
        headers: this.#headers,
      });
    } catch (err) {
      throw spaceAccessError(err, this.#ctx.credentials) ?? err;
    }
  }

  /**
   * The docs sites of the organization that contain the space, every page of the listing. Refusals are
   * left as they are: a token without access to the organization's sites is the sync's decision.
   */
  async sitesOfSpace(organization: string): Promise<Site[]> {
    const sites: Site[] = [];
    let page: string | undefined;
    do {
      const url = joinUrl(this.#ctx.baseUrl, `/v1/orgs/${pathSegment(organization)}/sites`, {
        space: this.#ctx.credentials.space_id,
        limit: SITES_PER_PAGE,
        page,
      });
      const answer = await this.#ctx.http.getJson(url, siteListSchema, { headers: this.#headers });
      sites.push(...answer.items);
      page = answer.next?.page;
    } while (page);
    return sites;
  }

  /** A site's sections and site spaces, with their draft states (one answer, not paginated). */
  siteStructure(organization: string, siteId: string): Promise<{ type: string; structure: unknown[] }> {
    const url = joinUrl(
      this.#ctx.baseUrl,
      `/v1/orgs/${pathSegment(organization)}/sites/${pathSegment(siteId)}/structure`,
    );
    return this.#ctx.http.getJson(url, siteStructureSchema, { headers: this.#headers });
  }

  /** The page tree and the reusable contents of a revision (GitBook does not paginate them). */
  async revision(revisionId: string): Promise<{ pages: unknown[]; reusableContents: unknown[] }> {
    const url = joinUrl(this.#ctx.baseUrl, `${this.#space}/revisions/${pathSegment(revisionId)}`);
    try {
      const answer = await this.#ctx.http.getJson(url, revisionSchema, { headers: this.#headers });
      return { pages: answer.pages, reusableContents: answer.reusableContents ?? [] };
    } catch (err) {
      throw spaceAccessError(err, this.#ctx.credentials) ?? err;
    }
  }

  /**
   * The body of a reusable content in a revision, as GitBook's JSON document: the only form GitBook
   * serves it in. Errors are left as they are, as for pages.
   */
  reusableDocument(revisionId: string, reusableId: string): Promise<JsonDocument> {
    const url = joinUrl(
      this.#ctx.baseUrl,
      `${this.#space}/revisions/${pathSegment(revisionId)}/reusable-contents/${pathSegment(reusableId)}/document`,
    );
    return this.#ctx.http.getJson(url, jsonDocumentSchema, { headers: this.#headers });
  }

  /**
   * What a revision changed against its parent, at most `limit` changes (`more` counts the rest). A
   * revision that is not the space's answers 404; errors are left as they are.
   */
  revisionChanges(revisionId: string, limit: number): Promise<RevisionChanges> {
    const url = joinUrl(this.#ctx.baseUrl, `${this.#space}/revisions/${pathSegment(revisionId)}/changes`, {
      limit,
      metadata: false,
    });
    return this.#ctx.http.getJson(url, revisionChangesSchema, { headers: this.#headers });
  }

  /**
   * One page of a revision as GitBook-flavoured markdown, its reusable content left as references (the
   * sync expands them itself, so it knows which pages depend on which). Errors are left as they are: the
   * sync decides which are the page's own problem and which are the whole space's.
   */
  pageMarkdown(revisionId: string, pageId: string): Promise<PageMarkdown> {
    const url = joinUrl(
      this.#ctx.baseUrl,
      `${this.#space}/revisions/${pathSegment(revisionId)}/page/${pathSegment(pageId)}`,
      { format: 'markdown' },
    );
    return this.#ctx.http.getJson(url, pageMarkdownSchema, { headers: this.#headers });
  }
}

/**
 * A 401, 403 or 404 from the space, its tree, one of its pages or reusable contents means the token or its access to the
 * space is gone: the sync stops with `source_auth_failed` naming the source and what GitBook said, and
 * the items stay. Undefined for any other error.
 */
export function spaceAccessError(err: unknown, creds: DocsSpaceCredentials): AppError | undefined {
  if (!isSourceHttpError(err) || err.kind !== 'status') return undefined;
  const space = creds.space_id;
  const refusal = (what: string, hint: string) =>
    sourceRefusal(DOCS_SPACE_SOURCE, what, err, hint, [creds.access_token]);
  switch (err.status) {
    case 401:
      return refusal('rejected the access token', 'Check source.access_token: it may have been revoked.');
    case 403:
      return refusal(`refused access to space ${space}`, "The token's user may have lost access to it.");
    case 404:
      return refusal(
        `has no space ${space} for this token`,
        "It was deleted or the token's user lost access to it.",
      );
    default:
      return undefined;
  }
}
