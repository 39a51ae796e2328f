/**
 * A fake GitBook API (vendor-apis/gitbook.md) for one space: Bearer auth, errors in the
 * `{error:{code,message}}` envelope, `X-RateLimit-*` headers on every answer, and a 429 with no
 * Retry-After, only `X-RateLimit-Reset` (UTC epoch seconds), as documented.
 *
 * The space has revisions: every content change (edit, add, remove, move, a reusable content edited)
 * makes a new revision id and moves the space's `revision`; older revisions stay readable
 * (`/revisions/{id}`, `/pages`, `/page/{id}`, `/reusable-contents/{id}`), so a sync that started on one
 * keeps a consistent view. Space and site settings change without a new revision, as in GitBook. Tests
 * mutate the space through {@link FakeGitbookSpace} between syncs.
 *
 * Publishing lives in docs sites (gitbook-sites.ts): by default one public, published site holds the
 * space at https://docs.acme.com/. The space's own `visibility` and `urls.published|public` no longer
 * decide publishing; the fake leaves them as the issue that asked for this model reports them for a space
 * published through a site (`private`, app URL only). GitBook's docs do not confirm what they read.
 *
 * Reusable content: a page's markdown refers to one with `{{reusable:<id>}}` as the test writes it. Served
 * as markdown, the reference becomes the Git Sync form `{% include "<../>.gitbook/includes/<slug>.md" %}`
 * (GitBook's markdown of a reusable-content block is not documented; Git Sync's is). `dereferenced` is
 * ignored for markdown (the spec lists it without saying it applies; the connector does not send it). Served
 * as `RevisionReusableContent` (`id`, `title`, `document`, `git`) in the revision and by id, and its body as
 * a `JSONDocument` (`/reusable-contents/{id}/document`), the documented path. Not modelled: the page's
 * `format=document` body, reusable content of other spaces, `evaluated`.
 */
import {
  bearerToken,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  startFakeServer,
} from './fake-server.ts';
import { defaultGitbookSites, type FakeGitbookSite, GITBOOK_ORG_ID, replySites } from './gitbook-sites.ts';
import { type BenchWorkspace, type BenchWorkspaceFactory, benchText } from './workspace.ts';

export { type FakeGitbookSite, GITBOOK_ORG_ID, GITBOOK_SITE_ID } from './gitbook-sites.ts';

export const GITBOOK_GOOD_TOKEN = 'gb_api_fake_good_token_0123456789';
export const GITBOOK_SPACE_ID = 'yN5y7mTE9ShLiSKLYkzY';
export const GITBOOK_FIRST_REVISION = 'HxR2f7QmKp0sLz8aWv3E';
export const GITBOOK_PUBLISHED_URL = 'https://docs.acme.com/';
const APP = 'https://app.gitbook.com';

/** One page of the fake space as a test writes it (the fake adds paths, URLs and the rest). */
export interface FakeGitbookPage {
  id: string;
  /** Default `document`. */
  type?: 'document' | 'group' | 'link' | 'computed';
  title: string;
  /** Default: from the title. */
  slug?: string;
  description?: string;
  hidden?: boolean;
  noIndex?: boolean;
  /** GitBook-flavoured markdown; a function is called on each request (the benchmark's bodies). */
  markdown?: string | (() => string);
  /** Link pages: the target URL. */
  href?: string;
  pages?: FakeGitbookPage[];
  createdAt?: string;
  updatedAt?: string;
}

/** One block of a reusable content's body, as a test writes it. */
export type FakeGitbookBlock =
  | { type: 'paragraph' | 'heading-1' | 'heading-2' | 'heading-3'; text: string }
  | { type: 'hint'; style: string; text: string }
  | { type: 'code'; syntax?: string; lines: string[] }
  | { type: 'list-unordered'; items: string[] };

export interface FakeGitbookReusableContent {
  id: string;
  title: string;
  blocks: FakeGitbookBlock[];
}

export interface FakeGitbookOptions {
  token?: string;
  spaceId?: string;
  title?: string;
  /** The space's own (legacy) visibility; default `private` (see the header). */
  visibility?: string;
  /** The page tree; default {@link defaultGitbookPages}. */
  pages?: FakeGitbookPage[];
  /** The organization's docs sites; default one public site holding the space (gitbook-sites.ts). */
  sites?: FakeGitbookSite[];
  reusableContents?: FakeGitbookReusableContent[];
}

interface Snapshot {
  id: string;
  parents: string[];
  createdAt: string;
  pages: unknown[];
  byId: Map<string, { json: Record<string, unknown>; markdown: FakeGitbookPage['markdown'] }>;
  reusable: Map<string, { json: Record<string, unknown>; blocks: FakeGitbookBlock[] }>;
}

interface Location {
  page: FakeGitbookPage;
  list: FakeGitbookPage[];
  index: number;
}

type PageChanges = Partial<
  Pick<FakeGitbookPage, 'title' | 'markdown' | 'description' | 'noIndex' | 'hidden'>
>;

/** The space behind the fake server: its settings, its page tree and its revisions. */
export class FakeGitbookSpace {
  /** The token requests must carry; {@link revokeToken} changes it. */
  token: string;
  readonly spaceId: string;
  title: string;
  /** The space's own `visibility` (legacy: sites decide publishing now). */
  visibility: string;
  /** The space's own `urls.published|public` (legacy); default none. */
  published: string | undefined;
  readonly organization = GITBOOK_ORG_ID;
  /** The organization's docs sites; tests change them in place. */
  sites: FakeGitbookSite[];
  /** `forbidden`: the space answers 403; `gone`: 404 (the token's user lost access, or it was deleted). */
  access: 'ok' | 'forbidden' | 'gone' = 'ok';
  /** `forbidden`: the organization's routes (sites) answer 403: the token's user is not a member. */
  orgAccess: 'ok' | 'forbidden' = 'ok';
  /** Answers for page reads by page id, in any revision, instead of the page (a 500, a malformed body). */
  readonly pageReplies = new Map<string, FakeReply>();
  /** Answers for reusable-content reads by id, in any revision, instead of the content. */
  readonly reusableReplies = new Map<string, FakeReply>();
  /** Rewrites the page tree as served (a malformed node). */
  treeFilter: ((pages: unknown[]) => unknown[]) | undefined;
  /** Called with each request before it is answered; a promise delays the answer. */
  onRequest: ((req: RecordedRequest) => void | Promise<void>) | undefined;

  #pages: FakeGitbookPage[];
  readonly #reusable = new Map<string, FakeGitbookReusableContent & { edits: number }>();
  readonly #revisions = new Map<string, Snapshot>();
  #current = '';
  #clock = Date.parse('2024-05-20T08:42:11.000Z');
  #counter = 0;

  constructor(opts: FakeGitbookOptions = {}) {
    this.token = opts.token ?? GITBOOK_GOOD_TOKEN;
    this.spaceId = opts.spaceId ?? GITBOOK_SPACE_ID;
    this.title = opts.title ?? 'Product Docs';
    this.visibility = opts.visibility ?? 'private';
    this.#pages = opts.pages ?? defaultGitbookPages();
    this.sites = opts.sites ?? defaultGitbookSites(this.spaceId, GITBOOK_PUBLISHED_URL);
    for (const rc of opts.reusableContents ?? [GITBOOK_DEFAULT_REUSABLE])
      this.#reusable.set(rc.id, { ...rc, edits: 0 });
    this.commit();
  }

  /** The active revision's id. */
  get revision(): string {
    return this.#current;
  }

  get revisionCount(): number {
    return this.#revisions.size;
  }

  /** The token the connection holds stops working (401 on every request). */
  revokeToken(): void {
    this.token = `gb_api_fake_rotated_${++this.#counter}`;
  }

  /** Changes a page's content or attributes: its `updatedAt` moves and a new revision is made. */
  edit(id: string, changes: PageChanges): void {
    this.#editQuietly(id, changes);
    this.commit();
  }

  /** Several edits, one revision (a merged change request). */
  editMany(edits: Array<[id: string, changes: PageChanges]>): void {
    for (const [id, changes] of edits) this.#editQuietly(id, changes);
    this.commit();
  }

  /** Adds a reusable content (a new revision). */
  addReusable(rc: FakeGitbookReusableContent): void {
    this.#reusable.set(rc.id, { ...rc, edits: 0 });
    this.commit();
  }

  /** Changes a reusable content's body: a new revision, and a new `document` id for it. */
  editReusable(id: string, blocks: FakeGitbookBlock[]): void {
    const rc = this.#reusable.get(id);
    if (!rc) throw new Error(`no reusable content ${id} in the fake space`);
    Object.assign(rc, { blocks, edits: rc.edits + 1 });
    this.commit();
  }

  /** The site holding the space by default (tests change its settings in place). */
  get site(): FakeGitbookSite {
    return this.sites[0]!;
  }

  /** Removes a page (and its children) from the tree. */
  remove(id: string): void {
    const at = this.#locate(id);
    at.list.splice(at.index, 1);
    this.commit();
  }

  /** Moves a page under another page or group (null: the top level), at `index` (default: last). */
  move(id: string, parentId: string | null, index?: number): void {
    const at = this.#locate(id);
    const [page] = at.list.splice(at.index, 1);
    const target = this.#children(parentId);
    target.splice(index ?? target.length, 0, page!);
    this.commit();
  }

  /** Adds a page under a page or group (null: the top level). */
  add(page: FakeGitbookPage, parentId: string | null = null, index?: number): void {
    page.createdAt ??= this.#tick();
    const target = this.#children(parentId);
    target.splice(index ?? target.length, 0, page);
    this.commit();
  }

  /** The current page, for reading (change it through the methods above). */
  page(id: string): FakeGitbookPage {
    return this.#locate(id).page;
  }

  /** The ids of every page that becomes an item (documents and computed pages without `noIndex`). */
  indexableIds(): string[] {
    const out: string[] = [];
    const walk = (list: FakeGitbookPage[]) => {
      for (const p of list) {
        const type = p.type ?? 'document';
        if ((type === 'document' || type === 'computed') && !p.noIndex) out.push(p.id);
        if (p.pages) walk(p.pages);
      }
    };
    walk(this.#pages);
    return out;
  }

  /** Makes a new revision of the current tree and makes it active. */
  commit(): string {
    const n = this.#revisions.size;
    const id = n === 0 ? GITBOOK_FIRST_REVISION : `rev${String(n).padStart(4, '0')}Qm7Lz2aWv3E`;
    const byId: Snapshot['byId'] = new Map();
    const pages = this.#snapshot(this.#pages, '', byId);
    const reusable: Snapshot['reusable'] = new Map();
    for (const rc of this.#reusable.values()) {
      const json = {
        id: rc.id,
        title: rc.title,
        document: `doc-rc-${rc.id}-${rc.edits}`,
        git: { oid: `oid${rc.id}${rc.edits}`, path: `.gitbook/includes/${slugify(rc.title)}.md` },
      };
      reusable.set(rc.id, { json, blocks: structuredClone(rc.blocks) });
    }
    this.#revisions.set(id, {
      id,
      parents: this.#current ? [this.#current] : [],
      createdAt: this.#tick(),
      pages,
      byId,
      reusable,
    });
    this.#current = id;
    return id;
  }

  /** The server's answer to one request. */
  async reply(req: RecordedRequest): Promise<FakeReply> {
    await this.onRequest?.(req);
    if (bearerToken(req) !== this.token) {
      return failure(401, 'You must be authenticated to access this resource');
    }
    if (req.method !== 'GET') return failure(405, 'Method not allowed');
    if (req.path === '/v1/user') {
      return ok({
        object: 'user',
        id: 'u0ZxY9wVt8',
        displayName: 'Ada Lovelace',
        email: 'ada@acme.test',
        urls: { location: 'https://api.gitbook.com/v1/user', app: APP },
      });
    }
    const org = /^\/v1\/orgs\/([^/]+)(\/.*)$/.exec(req.path);
    if (org) return this.#replyOrg(decodeURIComponent(org[1]!), org[2]!, req.query);
    const m = /^\/v1\/spaces\/([^/]+)(\/.*)?$/.exec(req.path);
    if (!m || decodeURIComponent(m[1]!) !== this.spaceId || this.access === 'gone') {
      return failure(404, 'Space not found');
    }
    if (this.access === 'forbidden') return failure(403, 'You do not have permission to access this space');
    const rest = m[2] ?? '';
    if (rest === '') return ok(this.#spaceJson());
    const route =
      /^\/(?:content|revisions\/([^/]+))(?:\/(pages|changes)|\/page\/([^/]+)|\/reusable-contents\/([^/]+)(\/document)?)?$/.exec(
        rest,
      );
    if (!route) return failure(404, 'Not found');
    const revisionId = route[1] === undefined ? this.#current : decodeURIComponent(route[1]);
    const snapshot = this.#revisions.get(revisionId);
    if (!snapshot) return failure(404, 'Revision not found');
    const tree = () => (this.treeFilter ? this.treeFilter(snapshot.pages) : snapshot.pages);
    if (route[3] !== undefined) return this.#replyPage(snapshot, decodeURIComponent(route[3]), req.query);
    if (route[4] !== undefined) {
      const injected = this.reusableReplies.get(decodeURIComponent(route[4]));
      if (injected) return injected;
      const rc = snapshot.reusable.get(decodeURIComponent(route[4]));
      if (!rc) return failure(404, 'Reusable content not found');
      return ok(route[5] ? jsonDocument(rc.blocks) : rc.json);
    }
    if (route[2] === 'pages') return ok({ pages: tree() });
    if (route[2] === 'changes') return ok(this.#changes(snapshot, Number(req.query.get('limit') ?? 10)));
    return ok({
      object: 'revision',
      id: snapshot.id,
      parents: snapshot.parents,
      type: 'edits',
      pages: tree(),
      files: [],
      reusableContents: [...snapshot.reusable.values()].map((rc) => rc.json),
      tags: [],
      urls: { app: `${APP}/s/${this.spaceId}/~/revisions/${snapshot.id}/` },
      createdAt: snapshot.createdAt,
    });
  }

  /**
   * `GET /revisions/{id}/changes` (OAS `getRevisionSemanticChanges`): the revision against its parent, page
   * changes first (`page_created`, `page_edited`, `page_moved` when the path moved, `page_deleted`, each
   * with `page {id, type, title, path}`), then `reusable_content_*`; at most `limit`, `more` counting the
   * rest. Groups and links are not diffed (the fake keeps no snapshot of them).
   */
  #changes(snapshot: Snapshot, limit: number): { changes: unknown[]; more?: number } {
    const parent = this.#revisions.get(snapshot.parents[0] ?? '');
    const before = parent?.byId ?? new Map<string, { json: Record<string, unknown> }>();
    const ref = (json: Record<string, unknown>) => ({
      id: json['id'],
      type: json['type'],
      title: json['title'],
      path: json['path'],
    });
    const own = (json: Record<string, unknown>) => JSON.stringify({ ...json, pages: undefined });
    const changes: unknown[] = [];
    for (const [id, { json }] of snapshot.byId) {
      const old = before.get(id)?.json;
      if (!old) changes.push({ type: 'page_created', page: ref(json) });
      else if (old['path'] !== json['path']) changes.push({ type: 'page_moved', page: ref(json) });
      else if (own(old) !== own(json)) changes.push({ type: 'page_edited', page: ref(json) });
    }
    for (const [id, { json }] of before) {
      if (!snapshot.byId.has(id)) changes.push({ type: 'page_deleted', page: ref(json) });
    }
    const rcBefore = parent?.reusable ?? new Map<string, { json: Record<string, unknown> }>();
    for (const [id, { json }] of snapshot.reusable) {
      const old = rcBefore.get(id)?.json;
      if (!old) changes.push({ type: 'reusable_content_created', reusableContent: { id } });
      else if (JSON.stringify(old) !== JSON.stringify(json)) {
        changes.push({ type: 'reusable_content_edited', reusableContent: { id } });
      }
    }
    const shown = changes.slice(0, Math.max(0, limit));
    return changes.length > shown.length
      ? { changes: shown, more: changes.length - shown.length }
      : { changes: shown };
  }

  #replyPage(snapshot: Snapshot, pageId: string, query: URLSearchParams): FakeReply {
    const injected = this.pageReplies.get(pageId);
    if (injected) return injected;
    const entry = snapshot.byId.get(pageId);
    if (!entry) return failure(404, 'Page not found in this space');
    if (query.get('format') !== 'markdown') return ok(entry.json);
    const raw = typeof entry.markdown === 'function' ? entry.markdown() : (entry.markdown ?? '');
    const depth = String(entry.json['path']).split('/').length - 1;
    const markdown = raw.replace(/\{\{reusable:([\w-]+)\}\}/g, (_m, id: string) => {
      const rc = snapshot.reusable.get(id);
      const title = rc ? String(rc.json['title']) : id;
      return `{% include "${'../'.repeat(depth)}.gitbook/includes/${slugify(title)}.md" %}`;
    });
    return ok({ ...entry.json, markdown });
  }

  #replyOrg(org: string, rest: string, query: URLSearchParams): FakeReply {
    if (org !== this.organization) return failure(404, 'Organization not found');
    if (this.orgAccess === 'forbidden') {
      return failure(403, 'You do not have permission to access this organization');
    }
    const reply = replySites(rest, query, org, {
      sites: this.sites,
      spaceJson: (id) => (id === this.spaceId ? this.#spaceJson() : { object: 'space', id, title: id }),
    });
    if (!reply) return failure(404, 'Not found');
    return reply.status === 200 ? ok(reply.body) : { ...reply, headers: rateHeaders(999) };
  }

  #spaceJson(): Record<string, unknown> {
    return {
      object: 'space',
      id: this.spaceId,
      title: this.title,
      emoji: '1f4d8',
      visibility: this.visibility,
      createdAt: '2023-03-14T10:02:11.512Z',
      updatedAt: this.#revisions.get(this.#current)?.createdAt,
      editMode: 'locked',
      urls: {
        location: `https://api.gitbook.com/v1/spaces/${this.spaceId}`,
        app: `${APP}/s/${this.spaceId}/`,
        ...(this.published ? { published: this.published, public: this.published } : {}),
      },
      organization: this.organization,
      revision: this.#current,
      defaultLevel: 'inherit',
      comments: 0,
      changeRequests: 3,
      changeRequestsOpen: 0,
      changeRequestsDraft: 0,
      mergeRules: { type: 'inherit' },
      permissions: { view: true, access: true, admin: false, edit: true, comment: true },
    };
  }

  #snapshot(list: FakeGitbookPage[], parentPath: string, byId: Snapshot['byId']): unknown[] {
    return list.map((page) => {
      const type = page.type ?? 'document';
      if (type === 'link') {
        const url = page.href ?? 'https://example.com/';
        return {
          id: page.id,
          title: page.title,
          kind: 'link',
          type,
          target: { kind: 'url', url },
          href: url,
        };
      }
      page.createdAt ??= '2023-03-14T10:05:00.000Z';
      const slug = page.slug ?? slugify(page.title);
      const path = parentPath ? `${parentPath}/${slug}` : slug;
      const children = this.#snapshot(page.pages ?? [], path, byId);
      if (type === 'group') {
        return { id: page.id, title: page.title, kind: 'group', type, slug, path, pages: children };
      }
      const json: Record<string, unknown> = {
        id: page.id,
        title: page.title,
        kind: 'sheet',
        type,
        ...(page.description === undefined ? {} : { description: page.description }),
        slug,
        path,
        urls: { app: `${APP}/s/${this.spaceId}/${path}` },
        documentId: `doc-${page.id}-${Date.parse(page.updatedAt ?? page.createdAt) / 1000}`,
        createdAt: page.createdAt,
        ...(page.updatedAt === undefined ? {} : { updatedAt: page.updatedAt }),
        layout: { title: true, description: true, tableOfContents: true, outline: true, pagination: true },
        tags: [],
        ...(page.hidden === undefined ? {} : { hidden: page.hidden }),
        ...(page.noIndex === undefined ? {} : { noIndex: page.noIndex }),
        ...(type === 'computed'
          ? { computed: { integration: 'openapi', source: 'openapi-pages', props: { spec: 'acme-api' } } }
          : {}),
        pages: children,
      };
      byId.set(page.id, { json, markdown: page.markdown });
      return json;
    });
  }

  /** The child list of a page or group (created when it has none), or the top level for null. */
  #children(parentId: string | null): FakeGitbookPage[] {
    if (parentId === null) return this.#pages;
    const parent = this.#locate(parentId).page;
    parent.pages ??= [];
    return parent.pages;
  }

  #editQuietly(id: string, changes: PageChanges): void {
    Object.assign(this.#locate(id).page, changes, { updatedAt: this.#tick() });
  }

  #locate(id: string): Location {
    const find = (list: FakeGitbookPage[]): Location | undefined => {
      for (let index = 0; index < list.length; index++) {
        const page = list[index]!;
        if (page.id === id) return { page, list, index };
        const inner = page.pages && find(page.pages);
        if (inner) return inner;
      }
      return undefined;
    };
    const found = find(this.#pages);
    if (!found) throw new Error(`no page ${id} in the fake space`);
    return found;
  }

  #tick(): string {
    this.#clock += 1_000;
    return new Date(this.#clock).toISOString();
  }
}

function ok(body: unknown): FakeReply {
  return { status: 200, headers: rateHeaders(999), body };
}

function failure(status: number, message: string): FakeReply {
  return { status, headers: rateHeaders(999), body: { error: { code: status, message } } };
}

function rateHeaders(remaining: number, resetInSeconds = 60): Record<string, string> {
  return {
    'x-ratelimit-limit': '1000',
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + resetInSeconds),
  };
}

/** A reusable content's body as GitBook's `JSONDocument` (OAS `JSONDocument`, `DocumentBlock*`). */
function jsonDocument(blocks: FakeGitbookBlock[]): Record<string, unknown> {
  const text = (t: string) => ({ object: 'text', leaves: [{ object: 'leaf', text: t, marks: [] }] });
  let keys = 0;
  const block = (type: string, nodes: unknown[], data: Record<string, unknown> = {}) => ({
    object: 'block',
    type,
    key: `k${++keys}`,
    data,
    nodes,
  });
  const paragraph = (t: string) => block('paragraph', [text(t)]);
  return {
    object: 'document',
    data: { schemaVersion: 2 },
    nodes: blocks.map((b) => {
      switch (b.type) {
        case 'hint':
          return block('hint', [paragraph(b.text)], { style: b.style });
        case 'code':
          return block(
            'code',
            b.lines.map((l) => block('code-line', [text(l)])),
            b.syntax ? { syntax: b.syntax } : {},
          );
        case 'list-unordered':
          return block(
            'list-unordered',
            b.items.map((i) => block('list-item', [paragraph(i)])),
          );
        default:
          return block(b.type, [text(b.text)]);
      }
    }),
  };
}

function slugify(title: string): string {
  return (
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'page'
  );
}

export interface FakeGitbook extends FakeServer {
  space: FakeGitbookSpace;
}

/** Starts the fake on loopback; close it in the test's `after`. */
export async function startFakeGitbook(opts: FakeGitbookOptions = {}): Promise<FakeGitbook> {
  const space = new FakeGitbookSpace(opts);
  const server = await startFakeServer((req) => space.reply(req), {
    rateLimitReply: (seconds) => ({
      status: 429,
      headers: rateHeaders(0, seconds),
      body: {
        error: { code: 429, message: `API rate limit exceeded. Please try again in ${seconds} seconds` },
      },
    }),
    unavailableReply: () => ({
      status: 503,
      headers: rateHeaders(999),
      body: { error: { code: 503, message: 'Service unavailable' } },
    }),
  });
  return Object.assign(server, { space });
}

// ---------------------------------------------------------------------------------------------------
// The default space: every page kind and every block kind
// ---------------------------------------------------------------------------------------------------

/** The reusable content of the default space, referenced by two of its pages. */
export const GITBOOK_DEFAULT_REUSABLE: FakeGitbookReusableContent = {
  id: 'rcSupport001',
  title: 'Need help',
  blocks: [
    { type: 'paragraph', text: 'Write to support@acme.test with your project id.' },
    { type: 'hint', style: 'warning', text: 'Rollbacks older than 30 days need a support ticket.' },
  ],
};

/** Item count of the default space: documents and computed pages without `noIndex`. */
export const GITBOOK_DEFAULT_ITEMS = 7;

/** A fresh copy of the default page tree (tests change it). */
export function defaultGitbookPages(): FakeGitbookPage[] {
  return [
    {
      id: 'pgGrpStart01',
      type: 'group',
      title: 'Getting started',
      pages: [
        {
          id: 'pgDocInstall',
          title: 'Installation',
          description: 'Install the CLI in two minutes',
          updatedAt: '2024-05-20T08:42:11.000Z',
          markdown: INSTALLATION_MD,
        },
        {
          id: 'pgDocQuick01',
          title: 'Quickstart',
          markdown: QUICKSTART_MD,
        },
        {
          id: 'pgLnkChanges',
          type: 'link',
          title: 'Changelog',
          href: 'https://github.com/acme/cli/releases',
        },
      ],
    },
    {
      id: 'pgDocGuides1',
      title: 'Guides',
      markdown: '# Guides\n\nTask-oriented guides for running the Acme CLI in real projects.\n',
      pages: [
        { id: 'pgDocConfig1', title: 'Configuration', markdown: CONFIGURATION_MD },
        {
          id: 'pgDocDeploy1',
          title: 'Deploying to production',
          hidden: true,
          markdown: DEPLOYING_MD,
        },
      ],
    },
    {
      id: 'pgDocRoadmap',
      title: 'Internal roadmap',
      noIndex: true,
      markdown: '# Internal roadmap\n\nQ3: rewrite the plugin loader. Not for search.\n',
    },
    {
      id: 'pgGrpRefs001',
      type: 'group',
      title: 'Reference',
      pages: [
        { id: 'pgDocRestApi', title: 'REST API', markdown: REST_API_MD },
        {
          id: 'pgCmpEndpts1',
          type: 'computed',
          title: 'Generated endpoints',
          markdown: '# Generated endpoints\n\nEndpoints generated from the OpenAPI specification of Acme.\n',
        },
      ],
    },
  ];
}

const INSTALLATION_MD = `# Installation

Install the **Acme CLI** with your package manager.

{% hint style="info" %}
Requires Node 18+ and \`npm\` 9.
{% endhint %}

{% tabs %}
{% tab title="macOS" %}
\`\`\`bash
brew install acme
\`\`\`
{% endtab %}

{% tab title="Windows" %}
Download the installer from the releases page and run it.
{% endtab %}
{% endtabs %}

{% code title="acme.config.js" overflow="wrap" lineNumbers="true" %}
\`\`\`javascript
export default { region: "eu-west-1" };
\`\`\`
{% endcode %}

<details>

<summary>Troubleshooting a failed install</summary>

Delete \`~/.acme/cache\` and run the installer again.

</details>

<figure><img src="https://files.gitbook.com/acme/install.png" alt="The installer window"><figcaption><p>The installer</p></figcaption></figure>
`;

const QUICKSTART_MD = `# Quickstart

Create your first project in three steps.

- [x] Install the CLI
- [ ] Run \`acme init\`
- [ ] Deploy

| Command | What it does |
| --- | --- |
| \`acme init\` | Creates a project |
| \`acme deploy\` | Deploys it |

{% embed url="https://www.youtube.com/watch?v=acme123" %}
A five-minute tour of the CLI
{% endembed %}

{% content-ref url="../guides/configuration.md" %}
[configuration.md](../guides/configuration.md)
{% endcontent-ref %}

See the [installation guide](installation.md) first.
`;

const CONFIGURATION_MD = `# Configuration

Settings live in \`acme.config.js\`.

{% hint style="warning" %}
Never commit your API key.
{% endhint %}

{% stepper %}
{% step %}
### Create the file
Run \`acme config init\`.
{% endstep %}
{% step %}
### Set the region
Edit the \`region\` field.
{% endstep %}
{% endstepper %}

{% file src="https://files.gitbook.com/acme/sample-config.zip" %}
Sample configuration
{% endfile %}

{{reusable:rcSupport001}}
`;

const DEPLOYING_MD = `# Deploying to production

Blue-green deployments keep the previous release warm, so a rollback to it takes seconds instead of a
full redeploy.

{% hint style="danger" %}
Run database migrations before switching traffic.
{% endhint %}

1. Build the release with \`acme build --prod\`.
2. Switch traffic with \`acme switch\`.

{{reusable:rcSupport001}}
`;

const REST_API_MD = `# REST API

{% swagger method="get" path="/v1/projects" baseUrl="https://api.acme.com" summary="List projects" %}
{% swagger-description %}
Lists the projects of the account.
{% endswagger-description %}

{% swagger-parameter in="query" name="limit" type="Number" required="false" %}
Page size, at most 100.
{% endswagger-parameter %}

{% swagger-response status="200: OK" description="The projects" %}
\`\`\`json
{ "projects": [] }
\`\`\`
{% endswagger-response %}
{% endswagger %}

{% columns %}
{% column %}
Left column text.
{% endcolumn %}
{% column %}
Right column text.
{% endcolumn %}
{% endcolumns %}

{% sparkle flavour="rare" %}
Text inside a tag nobody knows.
{% endsparkle %}
`;

// ---------------------------------------------------------------------------------------------------
// Benchmark workspace
// ---------------------------------------------------------------------------------------------------

const WORDS =
  'deploy project region cluster release rollback config token cache build plugin runtime webhook queue metric alert schema migration backup replica gateway latency storage bucket pipeline secret audit policy quota tenant'.split(
    ' ',
  );

/** A few KB of GitBook-flavoured markdown for page `n` at edit `edit`, the same every time it is asked. */
export function benchPageMarkdown(n: number, edit: number): string {
  const { word, sentence, paragraph } = benchText(WORDS, n, edit);
  return `# Page ${n}

${paragraph(5)}${edit ? ` Revised in edit ${edit}.` : ''}

## Overview of ${word()} ${word()}

${paragraph(6)}

{% hint style="info" %}
${paragraph(2)}
{% endhint %}

{% tabs %}
{% tab title="CLI" %}
\`\`\`bash
acme ${word()} --${word()} ${n}
\`\`\`
{% endtab %}

{% tab title="API" %}
${paragraph(2)}
{% endtab %}
{% endtabs %}

## Details

- ${sentence(8)}
- ${sentence(8)}
- [ ] ${sentence(6)}

| Setting | Value |
| --- | --- |
| ${word()} | ${n} |
| ${word()} | ${edit} |

${paragraph(6)}
`;
}

const BENCH_GROUP_SIZE = 50;
const BENCH_FAMILY_SIZE = 5;

export const gitbookBenchWorkspace: BenchWorkspaceFactory = {
  type: 'docs_space',
  label: 'GitBook',
  baseUrlSetting: 'KB_DOCS_SPACE_BASE_URL',
  async start(documents: number): Promise<BenchWorkspace> {
    const body = (n: number, edit: number) => () => benchPageMarkdown(n, edit);
    const edits = new Map<number, number>();
    const groups: FakeGitbookPage[] = [];
    // Groups of 50 pages, each page with up to four child pages: a tree as deep as real docs.
    for (let n = 0; n < documents; n++) {
      if (n % BENCH_GROUP_SIZE === 0) {
        groups.push({
          id: `bgGroup${n}`,
          type: 'group',
          title: `Section ${n / BENCH_GROUP_SIZE + 1}`,
          pages: [],
        });
      }
      const group = groups.at(-1)!;
      const page: FakeGitbookPage = { id: `bgPage${n}`, title: `Page ${n}`, markdown: body(n, 0) };
      if (n % BENCH_FAMILY_SIZE === 0) group.pages!.push(page);
      else group.pages!.at(-1)!.pages = [...(group.pages!.at(-1)!.pages ?? []), page];
    }
    const fake = await startFakeGitbook({ pages: groups });
    let nextEdit = 0;
    return {
      url: fake.url,
      requests: fake.requests,
      close: () => fake.close(),
      source: { type: 'docs_space', access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID },
      edit(count: number): string[] {
        const changes: Array<[string, PageChanges]> = [];
        for (let i = 0; i < Math.min(count, documents); i++) {
          const n = nextEdit++ % documents;
          const edit = (edits.get(n) ?? 0) + 1;
          edits.set(n, edit);
          changes.push([`bgPage${n}`, { markdown: body(n, edit) }]);
        }
        fake.space.editMany(changes);
        return changes.map(([id]) => id);
      },
    };
  },
};
