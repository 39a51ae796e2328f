/**
 * A fake Notion API speaking the 2025-09-03 shapes (vendor-apis/notion.md): Bearer auth, a mandatory
 * `Notion-Version`, errors in Notion's envelope, `page_size` (at most 100) with opaque cursors, and a
 * workspace model tests change between syncs.
 *
 * The model: pages (with block trees), databases holding one data source each, rows in them, and the
 * flags Notion's answers depend on. A page is readable unless it or an ancestor was unshared or deleted
 * (404 `object_not_found`); it is in the trash when it or an ancestor was trashed (still readable, with
 * `in_trash`; left out of search and queries). Search lists readable pages, rows and data sources, except
 * those marked `searchable: false`: Notion's search misses pages, which the connector must find by
 * walking. Edits stamp `last_edited_time` with the fake's clock rounded down to the minute, as Notion
 * does, and every answer carries that clock in its `Date` header.
 *
 * Data-source queries (`POST /v1/data_sources/{id}/query`) answer at most `queryCap` results per query
 * (Notion: 10,000; a query is its filter and sort). Past the cap pagination ends (`has_more: false`) and
 * every page served from the capped result carries `request_status: {type: "incomplete", incomplete_reason:
 * "query_result_limit_reached"}`; an uncapped answer has no `request_status`, as Notion's ordinary answers
 * have none. Queries take `sorts` and `filter` on the `created_time` / `last_edited_time` timestamps
 * (alone or in an `and`), and `result_type`. A wiki's data source holds databases too: its query answers
 * their data sources (`object: "data_source"`) among its pages. A synced copy whose original sits in a page
 * the integration cannot read answers 404 naming the original for its children, while the page holding
 * the copy reads normally.
 *
 * Not modelled: property filters and sorts (refused with 400), view queries, a cap on search (Notion
 * documents none), `created_time` at a finer grain than the minute, the per-workspace rate limit and 529.
 *
 * Bodies can be stored trees (tests) or generated from a number on request (`notionBenchWorkspace`), so
 * a large workspace costs the fake little memory.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type BenchWorkspace, type BenchWorkspaceFactory, spreadPick } from './workspace.ts';
import {
  bearerToken,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  startFakeServer,
} from './fake-server.ts';

export const NOTION_GOOD_TOKEN = 'ntn_fake_good_token_0123456789';

const USER = { object: 'user', id: '06a2e1f3-7e8c-4c0b-a6fc-1b8e1d21a0e5' };
const REQUEST_ID = '0f8c1d7e-2a4b-4c6d-8e9f-a1b2c3d4e5f6';
const MINUTE = 60_000;

/** An error in Notion's envelope. */
export function notionError(status: number, code: string, message: string): FakeReply {
  return { status, body: { object: 'error', status, code, message, request_id: REQUEST_ID } };
}

function notFound(kind: string, id: string): FakeReply {
  return notionError(
    404,
    'object_not_found',
    `Could not find ${kind} with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
  );
}

// ---------------------------------------------------------------------------------------------------
// Rich text, blocks and property values, as tests write them
// ---------------------------------------------------------------------------------------------------

export interface RichTextJson {
  type: string;
  plain_text: string;
  href: string | null;
  annotations: {
    bold: boolean;
    italic: boolean;
    strikethrough: boolean;
    underline: boolean;
    code: boolean;
    color: string;
  };
  [key: string]: unknown;
}
type RichInput = string | RichTextJson;

/** A text run; `link` makes it a link. */
export function rt(
  text: string,
  opts: { bold?: boolean; italic?: boolean; strikethrough?: boolean; code?: boolean; link?: string } = {},
): RichTextJson {
  return {
    type: 'text',
    text: { content: text, link: opts.link ? { url: opts.link } : null },
    annotations: {
      bold: opts.bold ?? false,
      italic: opts.italic ?? false,
      strikethrough: opts.strikethrough ?? false,
      underline: false,
      code: opts.code ?? false,
      color: 'default',
    },
    plain_text: text,
    href: opts.link ?? null,
  };
}

/** A page mention: Notion writes the page's title as `plain_text` and its path as `href`. */
export function pageMention(pageId: string, title: string): RichTextJson {
  return {
    ...rt(title),
    type: 'mention',
    text: undefined,
    mention: { type: 'page', page: { id: pageId } },
    href: `https://www.notion.so/${pageId.replace(/-/g, '')}`,
  };
}

/** An inline equation. */
export function inlineEquation(expression: string): RichTextJson {
  return { ...rt(expression), type: 'equation', text: undefined, equation: { expression } };
}

function rich(parts: readonly RichInput[]): RichTextJson[] {
  return parts.map((p) => (typeof p === 'string' ? rt(p) : p));
}

/** A block of a stored tree. `raw` is served as is (a malformed block). */
export interface FakeBlock {
  id: string;
  type: string;
  data: Record<string, unknown>;
  children: FakeBlock[];
  raw?: unknown;
}

function block(
  type: string,
  data: Record<string, unknown>,
  children: FakeBlock[] = [],
  id?: string,
): FakeBlock {
  return { id: id ?? randomUUID(), type, data, children };
}

const text = (type: string, parts: RichInput[], children: FakeBlock[] = []) =>
  block(type, { rich_text: rich(parts), color: 'default' }, children);

/** Block builders (payloads as in vendor-apis/notion.md section 5). */
export const nb = {
  paragraph: (...parts: RichInput[]) => text('paragraph', parts),
  paragraphWith: (parts: RichInput[], children: FakeBlock[]) => text('paragraph', parts, children),
  heading: (level: 1 | 2 | 3, title: string, children: FakeBlock[] = []) =>
    block(
      `heading_${level}`,
      { rich_text: rich([title]), color: 'default', is_toggleable: children.length > 0 },
      children,
    ),
  bullet: (parts: RichInput | RichInput[], children: FakeBlock[] = []) =>
    text('bulleted_list_item', Array.isArray(parts) ? parts : [parts], children),
  numbered: (parts: RichInput | RichInput[], children: FakeBlock[] = []) =>
    text('numbered_list_item', Array.isArray(parts) ? parts : [parts], children),
  todo: (title: string, checked: boolean) =>
    block('to_do', { rich_text: rich([title]), checked, color: 'default' }),
  toggle: (title: string, children: FakeBlock[]) => text('toggle', [title], children),
  quote: (parts: RichInput | RichInput[], children: FakeBlock[] = []) =>
    text('quote', Array.isArray(parts) ? parts : [parts], children),
  callout: (emoji: string, parts: RichInput | RichInput[], children: FakeBlock[] = []) =>
    block(
      'callout',
      {
        rich_text: rich(Array.isArray(parts) ? parts : [parts]),
        icon: { type: 'emoji', emoji },
        color: 'gray_background',
      },
      children,
    ),
  code: (language: string, source: string, caption?: string) =>
    block('code', { rich_text: rich([source]), caption: caption ? rich([caption]) : [], language }),
  equation: (expression: string) => block('equation', { expression }),
  divider: () => block('divider', {}),
  /** A table; its rows are `table_row` children, as Notion serves them. */
  table: (rows: string[][], hasColumnHeader = true) =>
    block(
      'table',
      { table_width: rows[0]?.length ?? 0, has_column_header: hasColumnHeader, has_row_header: false },
      rows.map((cells) => block('table_row', { cells: cells.map((c) => (c ? rich([c]) : [])) })),
    ),
  /** An image Notion hosts: a signed URL that expires within the hour. */
  hostedImage: (name: string, caption: string) =>
    block('image', {
      type: 'file',
      file: {
        url: `https://prod-files-secure.s3.us-west-2.amazonaws.com/ws/${name}?X-Amz-Signature=${randomUUID()}`,
        expiry_time: new Date(Date.now() + 3_600_000).toISOString(),
      },
      caption: caption ? rich([caption]) : [],
    }),
  externalImage: (url: string, caption: string) =>
    block('image', { type: 'external', external: { url }, caption: caption ? rich([caption]) : [] }),
  video: (url: string) => block('video', { type: 'external', external: { url }, caption: [] }),
  file: (url: string, name: string) =>
    block('file', { type: 'external', external: { url }, caption: [], name }),
  bookmark: (url: string, caption = '') =>
    block('bookmark', { url, caption: caption ? rich([caption]) : [] }),
  embed: (url: string) => block('embed', { url, caption: [] }),
  linkToPage: (pageId: string) => block('link_to_page', { type: 'page_id', page_id: pageId }),
  syncedOriginal: (children: FakeBlock[]) => block('synced_block', { synced_from: null }, children),
  syncedCopy: (originalId: string) =>
    block('synced_block', { synced_from: { type: 'block_id', block_id: originalId } }),
  columns: (...columns: FakeBlock[][]) =>
    block(
      'column_list',
      {},
      columns.map((c) => block('column', {}, c)),
    ),
  tableOfContents: () => block('table_of_contents', { color: 'default' }),
  /** A block type the connector does not know. */
  unknown: (type: string, data: Record<string, unknown>, children: FakeBlock[] = []) =>
    block(type, data, children),
  /** Served verbatim, whatever it is. */
  raw: (json: Record<string, unknown>): FakeBlock => ({
    id: typeof json['id'] === 'string' ? json['id'] : randomUUID(),
    type: 'raw',
    data: {},
    children: [],
    raw: json,
  }),
};

/** Property values of database rows (`{type, [type]: value}`). */
export const np = {
  text: (value: string) => ({ type: 'rich_text', rich_text: value ? [rt(value)] : [] }),
  number: (value: number | null) => ({ type: 'number', number: value }),
  select: (name: string) => ({
    type: 'select',
    select: { id: randomUUID().slice(0, 4), name, color: 'blue' },
  }),
  status: (name: string) => ({
    type: 'status',
    status: { id: randomUUID().slice(0, 4), name, color: 'green' },
  }),
  multiSelect: (...names: string[]) => ({
    type: 'multi_select',
    multi_select: names.map((name) => ({ id: randomUUID().slice(0, 4), name, color: 'gray' })),
  }),
  date: (start: string, end: string | null = null) => ({
    type: 'date',
    date: { start, end, time_zone: null },
  }),
  checkbox: (value: boolean) => ({ type: 'checkbox', checkbox: value }),
  url: (value: string | null) => ({ type: 'url', url: value }),
  email: (value: string | null) => ({ type: 'email', email: value }),
  people: (...names: string[]) => ({
    type: 'people',
    people: names.map((name) => ({
      object: 'user',
      id: randomUUID(),
      name,
      avatar_url: null,
      type: 'person',
    })),
  }),
  relation: (...ids: string[]) => ({
    type: 'relation',
    relation: ids.map((id) => ({ id })),
    has_more: false,
  }),
  formula: (value: number) => ({ type: 'formula', formula: { type: 'number', number: value } }),
  uniqueId: (prefix: string, number: number) => ({ type: 'unique_id', unique_id: { prefix, number } }),
};

// ---------------------------------------------------------------------------------------------------
// The workspace
// ---------------------------------------------------------------------------------------------------

interface Flags {
  trashed: boolean;
  /** Unshared from the integration: 404 for it and everything below. */
  restricted: boolean;
  /** Deleted for good: 404. */
  deleted: boolean;
  searchable: boolean;
}

type ParentRef =
  | { type: 'workspace' }
  | { type: 'page_id'; id: string }
  | { type: 'block_id'; id: string }
  | { type: 'data_source_id'; id: string };

interface PageNode extends Flags {
  kind: 'page';
  id: string;
  title: string;
  parent: ParentRef;
  blocks: FakeBlock[];
  /** Generated body (in front of `blocks`) from the revision. */
  generate?: ((rev: number) => FakeBlock[]) | undefined;
  rev: number;
  /** Row property values besides the title, by property name. */
  props: Record<string, Record<string, unknown>>;
  created: string;
  edited: string;
  malformed: boolean;
}

interface DatabaseNode extends Flags {
  kind: 'database';
  id: string;
  dataSourceId: string;
  title: string;
  parent: ParentRef;
  /** Property name → type, the title property first. */
  schema: Array<[string, string]>;
  created: string;
  edited: string;
}

type Node = PageNode | DatabaseNode;

export interface AddPage {
  id?: string;
  title: string;
  /** A page id (the page is listed at its end) or `{ block }` (inside that block, e.g. a column). */
  parent?: string | { block: string };
  blocks?: FakeBlock[];
  generate?: (rev: number) => FakeBlock[];
  searchable?: boolean;
  /** `last_edited_time` (and `created_time`); default: the clock's minute. */
  edited?: string;
}

export class NotionWorkspace {
  /** The workspace's id: `GET /v1/users/me` names it (`bot.workspace_id`), as do webhook events. */
  readonly workspaceId: string = randomUUID();
  readonly workspaceName = 'Acme Docs';
  readonly #nodes = new Map<string, Node>();
  /** Search order: pages, rows and data sources (by their database's id), as created. */
  readonly #order: string[] = [];
  readonly #dataSources = new Map<string, string>();
  /** Block → the page whose tree holds it, for stored blocks and generated blocks served so far. */
  readonly #blockOwner = new Map<string, string>();
  #frozen: number | null = null;
  #offset = 0;
  /** The most results one page of any list holds (Notion: 100); tests lower it to page small corpora. */
  maxPageSize = 100;
  /** The most results one data-source query reaches (Notion: 10,000); tests lower it. */
  queryCap = 10_000;
  readonly #faults: Array<{ match: (req: RecordedRequest) => boolean; reply: FakeReply; times: number }> = [];

  // Clock -------------------------------------------------------------------------------------------

  now(): number {
    return this.#frozen ?? Date.now() + this.#offset;
  }

  /** Stops the clock at `iso`. */
  setTime(iso: string): void {
    this.#frozen = Date.parse(iso);
  }

  advance(ms: number): void {
    if (this.#frozen !== null) this.#frozen += ms;
    else this.#offset += ms;
  }

  /** `last_edited_time` as Notion reports it: the clock's minute. */
  stamp(): string {
    return new Date(Math.floor(this.now() / MINUTE) * MINUTE).toISOString();
  }

  // Building ----------------------------------------------------------------------------------------

  addPage(opts: AddPage): string {
    const id = opts.id ?? randomUUID();
    const at = opts.edited ?? this.stamp();
    const parent = this.#attach(id, opts.parent, 'child_page', at);
    const page: PageNode = {
      kind: 'page',
      id,
      title: opts.title,
      parent,
      blocks: opts.blocks ?? [],
      generate: opts.generate,
      rev: 0,
      props: {},
      created: at,
      edited: at,
      malformed: false,
      trashed: false,
      restricted: false,
      deleted: false,
      searchable: opts.searchable ?? true,
    };
    this.#nodes.set(id, page);
    this.#order.push(id);
    this.#own(id, page.blocks);
    return id;
  }

  /** A database with one data source, listed in `parent`'s body. The first schema entry is the title. */
  addDatabase(opts: {
    id?: string;
    dataSourceId?: string;
    title: string;
    /** A page id (listed in its body), or `{ dataSource }`: a database inside a wiki's data source. */
    parent: string | { dataSource: string };
    schema: Array<[string, string]>;
    searchable?: boolean;
    edited?: string;
  }): { databaseId: string; dataSourceId: string } {
    const id = opts.id ?? randomUUID();
    const dataSourceId = opts.dataSourceId ?? randomUUID();
    const at = opts.edited ?? this.stamp();
    let parent: ParentRef;
    if (typeof opts.parent === 'string') parent = this.#attach(id, opts.parent, 'child_database', at);
    else {
      if (!this.#dataSources.has(opts.parent.dataSource))
        throw new Error(`no data source ${opts.parent.dataSource}`);
      parent = { type: 'data_source_id', id: opts.parent.dataSource };
    }
    this.#nodes.set(id, {
      kind: 'database',
      id,
      dataSourceId,
      title: opts.title,
      parent,
      schema: opts.schema,
      created: at,
      edited: at,
      trashed: false,
      restricted: false,
      deleted: false,
      searchable: opts.searchable ?? true,
    });
    this.#dataSources.set(dataSourceId, id);
    this.#order.push(id);
    return { databaseId: id, dataSourceId };
  }

  /** A row of the data source: `title` fills the title property, `props` the others by name. */
  addRow(
    dataSourceId: string,
    opts: {
      id?: string;
      title: string;
      props?: Record<string, Record<string, unknown>>;
      blocks?: FakeBlock[];
      generate?: (rev: number) => FakeBlock[];
      searchable?: boolean;
      edited?: string;
      /** `created_time`; default: `edited`. */
      created?: string;
    },
  ): string {
    if (!this.#dataSources.has(dataSourceId)) throw new Error(`no data source ${dataSourceId}`);
    const id = opts.id ?? randomUUID();
    const at = opts.edited ?? this.stamp();
    const row: PageNode = {
      kind: 'page',
      id,
      title: opts.title,
      parent: { type: 'data_source_id', id: dataSourceId },
      blocks: opts.blocks ?? [],
      generate: opts.generate,
      rev: 0,
      props: opts.props ?? {},
      created: opts.created ?? at,
      edited: at,
      malformed: false,
      trashed: false,
      restricted: false,
      deleted: false,
      searchable: opts.searchable ?? true,
    };
    this.#nodes.set(id, row);
    this.#order.push(id);
    this.#own(id, row.blocks);
    return id;
  }

  /** Lists a new page or database in its parent's body; answers its `parent`. */
  #attach(
    id: string,
    parent: AddPage['parent'],
    type: 'child_page' | 'child_database',
    at: string,
  ): ParentRef {
    if (parent === undefined) return { type: 'workspace' };
    const entry = block(type, {}, [], id);
    if (typeof parent === 'string') {
      const page = this.#page(parent);
      page.blocks.push(entry);
      page.edited = later(page.edited, at);
      return { type: 'page_id', id: parent };
    }
    const holder = this.#findStoredBlock(parent.block);
    if (!holder) throw new Error(`no block ${parent.block}`);
    holder.children.push(entry);
    const owner = this.#nodes.get(this.#blockOwner.get(parent.block)!);
    if (owner) owner.edited = later(owner.edited, at);
    return { type: 'block_id', id: parent.block };
  }

  #own(pageId: string, blocks: readonly FakeBlock[]): void {
    for (const b of blocks) {
      if (b.type === 'child_page' || b.type === 'child_database') continue;
      this.#blockOwner.set(b.id, pageId);
      this.#own(pageId, b.children);
    }
  }

  #page(id: string): PageNode {
    const node = this.#nodes.get(id);
    if (node?.kind !== 'page') throw new Error(`no page ${id}`);
    return node;
  }

  #database(id: string): DatabaseNode {
    const node = this.#nodes.get(id);
    if (node?.kind !== 'database') throw new Error(`no database ${id}`);
    return node;
  }

  // Changes -----------------------------------------------------------------------------------------

  /** An edit: new text (appended paragraph, new title, or a generated body's next revision), new time. */
  edit(id: string, change: { title?: string; append?: FakeBlock[]; replace?: FakeBlock[] } = {}): void {
    const page = this.#page(id);
    if (change.title !== undefined) page.title = change.title;
    if (change.replace) page.blocks = change.replace;
    if (change.append) page.blocks.push(...change.append);
    this.#own(id, page.blocks);
    page.rev++;
    page.edited = this.stamp();
  }

  /** Changes row properties (and its time). */
  editRow(id: string, props: Record<string, Record<string, unknown>>): void {
    const row = this.#page(id);
    Object.assign(row.props, props);
    row.rev++;
    row.edited = this.stamp();
  }

  /** Moves to the trash (with everything below it). */
  trash(id: string): void {
    const node = this.#nodes.get(id)!;
    node.trashed = true;
    node.edited = this.stamp();
  }

  /** Removes the integration's access: 404 for it and everything below it. */
  unshare(id: string): void {
    this.#nodes.get(id)!.restricted = true;
  }

  /** Deletes for good (404), and takes it out of its parent's body. */
  remove(id: string): void {
    const node = this.#nodes.get(id)!;
    node.deleted = true;
    this.#detach(id, node.parent);
  }

  /** Moves a page under another page. Its parents' bodies change (and their times); its own time does not. */
  move(id: string, newParent: string): void {
    const page = this.#page(id);
    this.#detach(id, page.parent);
    page.parent = this.#attach(id, newParent, 'child_page', this.stamp());
  }

  hideFromSearch(id: string): void {
    this.#nodes.get(id)!.searchable = false;
  }

  /** Serves the page (in search, `GET /v1/pages`, queries) with a `last_edited_time` that is not a string. */
  corrupt(id: string, on = true): void {
    this.#page(id).malformed = on;
  }

  #detach(id: string, parent: ParentRef): void {
    if (parent.type !== 'page_id' && parent.type !== 'block_id') return;
    const holder = parent.type === 'page_id' ? this.#nodes.get(parent.id) : this.#findStoredBlock(parent.id);
    if (!holder) return;
    const list = 'kind' in holder ? (holder.kind === 'page' ? holder.blocks : []) : holder.children;
    const at = list.findIndex((b) => b.id === id);
    if (at >= 0) list.splice(at, 1);
    const ownerId = parent.type === 'page_id' ? parent.id : this.#blockOwner.get(parent.id);
    const owner = ownerId ? this.#nodes.get(ownerId) : undefined;
    if (owner) owner.edited = this.stamp();
  }

  #findStoredBlock(id: string): FakeBlock | undefined {
    const owner = this.#blockOwner.get(id);
    if (!owner) return undefined;
    const page = this.#nodes.get(owner);
    if (page?.kind !== 'page') return undefined;
    return findBlock(page.blocks, id);
  }

  // Reading -----------------------------------------------------------------------------------------

  /** The node above: a page's parent page (or the page holding its parent block), a row's database. */
  #up(node: Node): Node | undefined {
    const p = node.parent;
    if (p.type === 'page_id') return this.#nodes.get(p.id);
    if (p.type === 'block_id') {
      const owner = this.#blockOwner.get(p.id);
      return owner ? this.#nodes.get(owner) : undefined;
    }
    if (p.type === 'data_source_id') {
      const db = this.#dataSources.get(p.id);
      return db ? this.#nodes.get(db) : undefined;
    }
    return undefined;
  }

  #chain(node: Node): Node[] {
    const out: Node[] = [];
    let current: Node | undefined = node;
    while (current && out.length < 64) {
      out.push(current);
      current = this.#up(current);
    }
    return out;
  }

  readable(node: Node): boolean {
    return !this.#chain(node).some((n) => n.restricted || n.deleted);
  }

  inTrash(node: Node): boolean {
    return this.#chain(node).some((n) => n.trashed);
  }

  #body(page: PageNode): FakeBlock[] {
    const generated = page.generate?.(page.rev) ?? [];
    for (const b of generated) this.#registerGenerated(page.id, b);
    return [...generated, ...page.blocks];
  }

  #registerGenerated(pageId: string, b: FakeBlock): void {
    if (b.children.length === 0) return;
    this.#blockOwner.set(b.id, pageId);
    for (const c of b.children) this.#registerGenerated(pageId, c);
  }

  /** Every document id (pages and rows) that is readable and not in the trash, for assertions. */
  liveDocuments(): string[] {
    return this.#order.filter((id) => {
      const node = this.#nodes.get(id)!;
      return node.kind === 'page' && this.readable(node) && !this.inTrash(node);
    });
  }

  titleOf(id: string): string {
    return this.#nodes.get(id)!.title;
  }

  /**
   * A page's or database's parent as webhook events give it (`data.parent`): `space` for the workspace,
   * `database` (with the `data_source_id`) for a row. Known nodes only, readable or not (deleted ones too).
   */
  webhookParent(id: string): { id: string; type: string; data_source_id?: string } {
    const node = this.#nodes.get(id);
    if (!node) throw new Error(`no node ${id}`);
    const p = node.parent;
    switch (p.type) {
      case 'workspace':
        return { id: this.workspaceId, type: 'space' };
      case 'page_id':
        return { id: p.id, type: 'page' };
      case 'block_id':
        return { id: p.id, type: 'block' };
      case 'data_source_id':
        return { id: this.#dataSources.get(p.id)!, type: 'database', data_source_id: p.id };
    }
  }

  /** The page's notion.so address, as `url` gives it. */
  urlOf(id: string): string {
    return pageUrl(this.#nodes.get(id)!);
  }

  // JSON --------------------------------------------------------------------------------------------

  #parentJson(p: ParentRef): Record<string, unknown> {
    switch (p.type) {
      case 'workspace':
        return { type: 'workspace', workspace: true };
      case 'page_id':
        return { type: 'page_id', page_id: p.id };
      case 'block_id':
        return { type: 'block_id', block_id: p.id };
      case 'data_source_id':
        return { type: 'data_source_id', data_source_id: p.id, database_id: this.#dataSources.get(p.id) };
    }
  }

  pageJson(page: PageNode): Record<string, unknown> {
    const trashed = this.inTrash(page);
    let properties: Record<string, unknown> = {
      title: { id: 'title', type: 'title', title: [rt(page.title)] },
    };
    if (page.parent.type === 'data_source_id') {
      const db = this.#database(this.#dataSources.get(page.parent.id)!);
      properties = {};
      db.schema.forEach(([name, type], i) => {
        const id = i === 0 ? 'title' : encodeURIComponent(name.slice(0, 4));
        if (i === 0) properties[name] = { id, type: 'title', title: [rt(page.title)] };
        else properties[name] = { id, ...(page.props[name] ?? emptyValue(type)) };
      });
    }
    return {
      object: 'page',
      id: page.id,
      created_time: page.created,
      last_edited_time: page.malformed ? 1716194520 : page.edited,
      created_by: USER,
      last_edited_by: USER,
      cover: null,
      icon: null,
      parent: this.#parentJson(page.parent),
      archived: trashed,
      in_trash: trashed,
      is_locked: false,
      properties,
      url: pageUrl(page),
      public_url: null,
    };
  }

  #databaseJson(db: DatabaseNode): Record<string, unknown> {
    const trashed = this.inTrash(db);
    return {
      object: 'database',
      id: db.id,
      created_time: db.created,
      last_edited_time: db.edited,
      title: [rt(db.title)],
      description: [],
      icon: null,
      cover: null,
      parent: this.#parentJson(db.parent),
      is_inline: true,
      archived: trashed,
      in_trash: trashed,
      is_locked: false,
      data_sources: [{ id: db.dataSourceId, name: db.title }],
      url: pageUrl(db),
      public_url: null,
    };
  }

  #dataSourceJson(db: DatabaseNode): Record<string, unknown> {
    const trashed = this.inTrash(db);
    return {
      object: 'data_source',
      id: db.dataSourceId,
      created_time: db.created,
      last_edited_time: db.edited,
      title: [rt(db.title)],
      description: [],
      icon: null,
      properties: Object.fromEntries(
        db.schema.map(([name, type], i) => [name, { id: i === 0 ? 'title' : name, name, type, [type]: {} }]),
      ),
      parent: { type: 'database_id', database_id: db.id },
      database_parent: this.#parentJson(db.parent),
      archived: trashed,
      in_trash: trashed,
      url: pageUrl(db),
      public_url: null,
    };
  }

  #blockJson(b: FakeBlock, parent: Record<string, unknown>, page: PageNode): unknown {
    if (b.raw !== undefined) return b.raw;
    let data = b.data;
    let hasChildren = b.children.length > 0;
    if (b.type === 'child_page') {
      const child = this.#nodes.get(b.id);
      data = { title: child?.title ?? '' };
      hasChildren = child?.kind === 'page' && this.#body(child).length > 0;
    } else if (b.type === 'child_database') {
      data = { title: this.#nodes.get(b.id)?.title ?? '' };
      hasChildren = false;
    } else if (b.type === 'synced_block' && (b.data['synced_from'] as unknown) !== null) {
      hasChildren = true;
    }
    return {
      object: 'block',
      id: b.id,
      parent,
      created_time: page.created,
      last_edited_time: page.edited,
      created_by: USER,
      last_edited_by: USER,
      has_children: hasChildren,
      archived: false,
      in_trash: false,
      type: b.type,
      [b.type]: data,
    };
  }

  // Endpoints ---------------------------------------------------------------------------------------

  /**
   * Answers the next `times` requests that `match` with `reply` instead (a 404 child block, a page that
   * keeps failing, a rate limit in the middle of a pass).
   */
  injectFault(
    match: (req: RecordedRequest) => boolean,
    reply: FakeReply,
    times = Number.POSITIVE_INFINITY,
  ): void {
    this.#faults.push({ match, reply, times });
  }

  handle(req: RecordedRequest): FakeReply {
    const fault = this.#faults.find((f) => f.times > 0 && f.match(req));
    if (fault) {
      fault.times--;
      return fault.reply;
    }
    const routes: Array<[string, RegExp, (id: string) => FakeReply]> = [
      ['GET', /^\/v1\/pages\/([^/]+)$/, (id) => this.#getPage(id)],
      ['GET', /^\/v1\/blocks\/([^/]+)\/children$/, (id) => this.#children(req, id)],
      ['GET', /^\/v1\/blocks\/([^/]+)$/, (id) => this.#getBlock(id)],
      ['GET', /^\/v1\/databases\/([^/]+)$/, (id) => this.#getDatabase(id)],
      ['GET', /^\/v1\/data_sources\/([^/]+)$/, (id) => this.#getDataSource(id)],
      ['POST', /^\/v1\/data_sources\/([^/]+)\/query$/, (id) => this.#query(req, id)],
    ];
    if (req.method === 'POST' && req.path === '/v1/search') return this.#search(req);
    for (const [method, pattern, answer] of routes) {
      const match = req.method === method ? pattern.exec(req.path) : null;
      if (match) return answer(decodeURIComponent(match[1]!));
    }
    return notionError(400, 'invalid_request_url', 'Invalid request URL.');
  }

  #readablePage(id: string): PageNode | undefined {
    const node = this.#nodes.get(normalizeId(id));
    return node?.kind === 'page' && this.readable(node) ? node : undefined;
  }

  #getPage(id: string): FakeReply {
    const page = this.#readablePage(id);
    return page ? ok(this.pageJson(page)) : notFound('page', id);
  }

  #getDatabase(id: string): FakeReply {
    const node = this.#nodes.get(normalizeId(id));
    if (node?.kind !== 'database' || !this.readable(node)) return notFound('database', id);
    return ok(this.#databaseJson(node));
  }

  #getDataSource(id: string): FakeReply {
    const dbId = this.#dataSources.get(normalizeId(id));
    const db = dbId ? this.#database(dbId) : undefined;
    if (!db || !this.readable(db)) return notFound('data source', id);
    return ok(this.#dataSourceJson(db));
  }

  #getBlock(id: string): FakeReply {
    const key = normalizeId(id);
    const page = this.#readablePage(key);
    if (page) {
      return ok({
        ...(this.#blockJson(
          block('child_page', {}, [], page.id),
          this.#parentJson(page.parent),
          page,
        ) as object),
      });
    }
    const found = this.#locate(key);
    if (!found) return notFound('block', id);
    return ok(this.#blockJson(found.block, found.parent, found.page));
  }

  /** A block of a readable page's tree (stored or generated), with its parent. */
  #locate(id: string): { block: FakeBlock; page: PageNode; parent: Record<string, unknown> } | undefined {
    const owner = this.#blockOwner.get(id);
    const page = owner ? this.#readablePage(owner) : undefined;
    if (!page) return undefined;
    const walk = (
      list: FakeBlock[],
      parent: Record<string, unknown>,
    ): { block: FakeBlock; parent: Record<string, unknown> } | undefined => {
      for (const b of list) {
        if (b.id === id) return { block: b, parent };
        if (b.type === 'child_page' || b.type === 'child_database') continue;
        const inner = walk(b.children, { type: 'block_id', block_id: b.id });
        if (inner) return inner;
      }
      return undefined;
    };
    const hit = walk(this.#body(page), { type: 'page_id', page_id: page.id });
    return hit ? { ...hit, page } : undefined;
  }

  #children(req: RecordedRequest, id: string): FakeReply {
    const key = normalizeId(id);
    const size = pageSize(req.query.get('page_size'), this.maxPageSize);
    if (typeof size !== 'number') return size;
    let list: FakeBlock[];
    let page: PageNode;
    let parent: Record<string, unknown>;
    const asPage = this.#readablePage(key);
    if (asPage) {
      page = asPage;
      list = this.#body(asPage);
      parent = { type: 'page_id', page_id: asPage.id };
    } else {
      const found = this.#locate(key);
      if (!found) return notFound('block', id);
      page = found.page;
      let holder = found.block;
      // A synced copy shows its original's children, if the original can be read.
      const from = holder.data['synced_from'] as { block_id: string } | null | undefined;
      if (holder.type === 'synced_block' && from) {
        const original = this.#locate(normalizeId(from.block_id));
        if (!original) return notFound('block', from.block_id);
        holder = original.block;
      }
      list = holder.type === 'child_page' || holder.type === 'child_database' ? [] : holder.children;
      parent = { type: 'block_id', block_id: found.block.id };
    }
    const start = decodeCursor(req.query.get('start_cursor'), `children:${key}`);
    if (start === undefined) return badCursor();
    const slice = list.slice(start, start + size);
    return listReply(
      slice.map((b) => this.#blockJson(b, parent, page)),
      start + size < list.length ? encodeCursor(`children:${key}`, start + size) : null,
      'block',
    );
  }

  #search(req: RecordedRequest): FakeReply {
    const body = parseBody(req);
    if (!body) return notionError(400, 'invalid_json', 'Error parsing JSON body.');
    const size = pageSize(body['page_size'], this.maxPageSize);
    if (typeof size !== 'number') return size;
    const filter = body['filter'] as { property?: string; value?: string } | undefined;
    if (filter && !['page', 'data_source'].includes(String(filter.value))) {
      return notionError(
        400,
        'validation_error',
        'body failed validation: body.filter.value should be `"page"` or `"data_source"`.',
      );
    }
    const query = typeof body['query'] === 'string' ? body['query'].toLowerCase() : '';
    const items: Array<{ node: Node; json: () => Record<string, unknown> }> = [];
    for (const id of this.#order) {
      const node = this.#nodes.get(id)!;
      if (!node.searchable || !this.readable(node) || this.inTrash(node)) continue;
      if (query && !node.title.toLowerCase().includes(query)) continue;
      if (node.kind === 'page') {
        if (filter && filter.value !== 'page') continue;
        items.push({ node, json: () => this.pageJson(node) });
      } else {
        if (filter && filter.value !== 'data_source') continue;
        items.push({ node, json: () => this.#dataSourceJson(node) });
      }
    }
    const sort = body['sort'] as { timestamp?: string; direction?: string } | undefined;
    if (sort?.timestamp === 'last_edited_time') {
      const sign = sort.direction === 'descending' ? -1 : 1;
      sortStable(items, (i) => i.node, [{ timestamp: 'last_edited_time', sign }]);
    }
    const start = decodeCursor(body['start_cursor'], 'search');
    if (start === undefined) return badCursor();
    return listReply(
      items.slice(start, start + size).map((i) => i.json()),
      start + size < items.length ? encodeCursor('search', start + size) : null,
      'page_or_data_source',
    );
  }

  #query(req: RecordedRequest, id: string): FakeReply {
    const key = normalizeId(id);
    const dbId = this.#dataSources.get(key);
    const db = dbId ? this.#database(dbId) : undefined;
    if (!db || !this.readable(db) || this.inTrash(db)) return notFound('data source', id);
    const body = parseBody(req);
    if (!body) return notionError(400, 'invalid_json', 'Error parsing JSON body.');
    const size = pageSize(body['page_size'], this.maxPageSize);
    if (typeof size !== 'number') return size;
    const match = timestampFilter(body['filter']);
    if (typeof match !== 'function') return match;
    const order = timestampSorts(body['sorts']);
    if (!Array.isArray(order)) return order;
    const resultType = body['result_type'];
    if (resultType !== undefined && resultType !== 'page' && resultType !== 'data_source') {
      return notionError(
        400,
        'validation_error',
        'body failed validation: body.result_type should be `"page"` or `"data_source"`.',
      );
    }
    const children: Node[] = [];
    for (const childId of this.#order) {
      const node = this.#nodes.get(childId)!;
      if (node.parent.type !== 'data_source_id' || node.parent.id !== key) continue;
      if (resultType !== undefined && (node.kind === 'page') !== (resultType === 'page')) continue;
      if (!this.readable(node) || this.inTrash(node)) continue;
      if (!match(node)) continue;
      children.push(node);
    }
    sortStable(children, (n) => n, order);
    // A query (its filter and sort) reaches `queryCap` results; its cursors name it, so another query's
    // cursor is refused, as Notion refuses a cursor of another list.
    const capped = children.length > this.queryCap;
    const reached = children.slice(0, this.queryCap);
    const list = `query:${key}:${createHash('sha256')
      .update(JSON.stringify([body['filter'], body['sorts'], resultType]))
      .digest('base64url')
      .slice(0, 12)}`;
    const start = decodeCursor(body['start_cursor'], list);
    if (start === undefined) return badCursor();
    const reply = listReply(
      reached
        .slice(start, start + size)
        .map((n) => (n.kind === 'page' ? this.pageJson(n) : this.#dataSourceJson(n))),
      start + size < reached.length ? encodeCursor(list, start + size) : null,
      'page_or_data_source',
    );
    if (capped) {
      (reply.body as Record<string, unknown>)['request_status'] = {
        type: 'incomplete',
        incomplete_reason: 'query_result_limit_reached',
      };
    }
    return reply;
  }
}

function later(a: string, b: string): string {
  return Date.parse(b) > Date.parse(a) ? b : a;
}

function findBlock(list: readonly FakeBlock[], id: string): FakeBlock | undefined {
  for (const b of list) {
    if (b.id === id) return b;
    const inner = findBlock(b.children, id);
    if (inner) return inner;
  }
  return undefined;
}

function normalizeId(id: string): string {
  const hex = id.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return id;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function pageUrl(node: { id: string; title: string }): string {
  const slug = node.title.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return `https://www.notion.so/${slug ? `${slug}-` : ''}${node.id.replace(/-/g, '')}`;
}

function emptyValue(type: string): Record<string, unknown> {
  const empty: Record<string, unknown> = {
    rich_text: [],
    multi_select: [],
    people: [],
    relation: [],
    files: [],
    checkbox: false,
  };
  return { type, [type]: type in empty ? empty[type] : null };
}

type TimestampNode = { created: string; edited: string };
type Timestamp = 'created_time' | 'last_edited_time';
const timeOf = (node: TimestampNode, timestamp: Timestamp) =>
  Date.parse(timestamp === 'created_time' ? node.created : node.edited);

function timeMatches(t: number, bound: Record<string, string>): boolean {
  const at = (k: string) => Date.parse(bound[k]!);
  if (bound['on_or_after'] && t < at('on_or_after')) return false;
  if (bound['after'] && t <= at('after')) return false;
  if (bound['on_or_before'] && t > at('on_or_before')) return false;
  if (bound['before'] && t >= at('before')) return false;
  if (bound['equals'] && t !== at('equals')) return false;
  return true;
}

/**
 * A query's filter as a predicate: timestamp conditions (`{timestamp, [timestamp]: {on_or_after, ...}}`),
 * alone or in an `and`. Anything else (property filters) is refused, so a connector sending one finds out.
 */
function timestampFilter(raw: unknown): ((node: TimestampNode) => boolean) | FakeReply {
  if (raw === undefined || raw === null) return () => true;
  const refuse = notionError(
    400,
    'validation_error',
    'body failed validation: the fake Notion only takes timestamp filters.',
  );
  const one = (f: unknown): ((node: TimestampNode) => boolean) | undefined => {
    if (!f || typeof f !== 'object') return undefined;
    const filter = f as Record<string, unknown>;
    if (Array.isArray(filter['and'])) {
      const parts = filter['and'].map(one);
      if (parts.some((p) => p === undefined)) return undefined;
      return (node) => parts.every((p) => p!(node));
    }
    const timestamp = filter['timestamp'];
    if (timestamp !== 'created_time' && timestamp !== 'last_edited_time') return undefined;
    const bound = filter[timestamp];
    if (!bound || typeof bound !== 'object') return undefined;
    return (node) => timeMatches(timeOf(node, timestamp), bound as Record<string, string>);
  };
  return one(raw) ?? refuse;
}

/** A query's `sorts`, timestamp sorts only (property sorts are refused). */
function timestampSorts(raw: unknown): Array<{ timestamp: Timestamp; sign: number }> | FakeReply {
  if (raw === undefined || raw === null) return [];
  const refuse = notionError(
    400,
    'validation_error',
    'body failed validation: the fake Notion only takes timestamp sorts.',
  );
  if (!Array.isArray(raw)) return refuse;
  const out: Array<{ timestamp: Timestamp; sign: number }> = [];
  for (const s of raw as Array<Record<string, unknown>>) {
    const timestamp = s?.['timestamp'];
    if (timestamp !== 'created_time' && timestamp !== 'last_edited_time') return refuse;
    out.push({ timestamp, sign: s['direction'] === 'descending' ? -1 : 1 });
  }
  return out;
}

/**
 * Sorts `list` in place by its nodes' times in `order`; ties keep their order (Array.prototype.sort is
 * stable). Each time is parsed once: a benchmark's data source sorts tens of thousands of rows a request,
 * in the process that also runs the service.
 */
function sortStable<T>(
  list: T[],
  nodeOf: (item: T) => TimestampNode,
  order: ReadonlyArray<{ timestamp: Timestamp; sign: number }>,
): void {
  if (order.length === 0) return;
  const keyed = list.map((item) => ({
    item,
    keys: order.map(({ timestamp }) => timeOf(nodeOf(item), timestamp)),
  }));
  keyed.sort((a, b) => {
    for (let k = 0; k < order.length; k++) {
      const d = a.keys[k]! - b.keys[k]!;
      if (d !== 0) return order[k]!.sign * d;
    }
    return 0;
  });
  keyed.forEach((entry, i) => {
    list[i] = entry.item;
  });
}

function ok(body: unknown): FakeReply {
  return { status: 200, body: { ...(body as object), request_id: REQUEST_ID } };
}

function listReply(results: unknown[], next: string | null, type: string): FakeReply {
  return {
    status: 200,
    body: {
      object: 'list',
      results,
      next_cursor: next,
      has_more: next !== null,
      type,
      [type]: {},
      request_id: REQUEST_ID,
    },
  };
}

function parseBody(req: RecordedRequest): Record<string, unknown> | undefined {
  if (!req.body) return {};
  try {
    const parsed: unknown = JSON.parse(req.body);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function pageSize(raw: unknown, max: number): number | FakeReply {
  if (raw === undefined || raw === null) return Math.min(100, max);
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) {
    return notionError(400, 'validation_error', 'body failed validation: page_size should be ≤ `100`.');
  }
  return Math.min(n, max);
}

// Cursors name the list they belong to, so one list's cursor is refused by another, as Notion does.
function encodeCursor(list: string, offset: number): string {
  return Buffer.from(JSON.stringify({ l: list, o: offset })).toString('base64url');
}

function decodeCursor(raw: unknown, list: string): number | undefined {
  if (raw === undefined || raw === null) return 0;
  try {
    const parsed = JSON.parse(Buffer.from(String(raw), 'base64url').toString('utf8')) as {
      l: string;
      o: number;
    };
    return parsed.l === list && Number.isInteger(parsed.o) && parsed.o >= 0 ? parsed.o : undefined;
  } catch {
    return undefined;
  }
}

function badCursor(): FakeReply {
  return notionError(400, 'validation_error', 'The start_cursor provided is invalid.');
}

// ---------------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------------

export interface FakeNotion extends FakeServer {
  workspace: NotionWorkspace;
}

export async function startFakeNotion(
  opts: { token?: string; workspace?: NotionWorkspace } = {},
): Promise<FakeNotion> {
  const token = opts.token ?? NOTION_GOOD_TOKEN;
  const workspace = opts.workspace ?? new NotionWorkspace();
  const dated = (reply: FakeReply): FakeReply => ({
    ...reply,
    headers: { date: new Date(workspace.now()).toUTCString(), ...reply.headers },
  });
  const server = await startFakeServer(
    (req) => {
      if (!req.headers['notion-version']) {
        return notionError(
          400,
          'missing_version',
          'Notion-Version header failed validation: Notion-Version should be defined.',
        );
      }
      if (bearerToken(req) !== token) return notionError(401, 'unauthorized', 'API token is invalid.');
      if (req.method === 'GET' && req.path === '/v1/users/me') {
        return {
          status: 200,
          body: {
            object: 'user',
            id: 'b3414d65-1224-4ff7-8ffa-c06674a8f8a2',
            name: 'KB Connector',
            avatar_url: null,
            type: 'bot',
            bot: {
              owner: { type: 'workspace', workspace: true },
              workspace_name: workspace.workspaceName,
              workspace_id: workspace.workspaceId,
              workspace_limits: { max_file_upload_size_in_bytes: 5_368_709_120 },
            },
            request_id: '6a1c3c1e-3b3a-4b7e-9d35-2d3f1b0f7b20',
          },
        };
      }
      return dated(workspace.handle(req));
    },
    {
      rateLimitReply: (seconds) => ({
        ...notionError(429, 'rate_limited', 'You have been rate limited. Please try again in a few minutes.'),
        headers: { 'retry-after': String(seconds) },
      }),
      unavailableReply: () =>
        notionError(503, 'service_unavailable', 'Notion is unavailable, please try again later.'),
    },
  );
  return Object.assign(server, { workspace });
}

// ---------------------------------------------------------------------------------------------------
// The sample workspace of the tests
// ---------------------------------------------------------------------------------------------------

/** Ids of the sample workspace's documents and containers. */
export interface SampleIds {
  handbook: string;
  deepDive: string;
  runbook: string;
  onboarding: string;
  firstWeek: string;
  releaseNotes: string;
  inColumn: string;
  database: string;
  dataSource: string;
  searchRow: string;
  billingRow: string;
  gatewayRow: string;
  syncedOriginal: string;
}

/**
 * A small workspace with every block kind the connector renders, pages search does not list (reachable
 * only by walking), a page inside a column, and a database of services. Its pages were last edited on
 * 2024-05-20, long before any test's clock.
 */
export function sampleWorkspace(): { workspace: NotionWorkspace; ids: SampleIds } {
  const ws = new NotionWorkspace();
  const edited = '2024-05-20T08:42:00.000Z';
  const synced = nb.syncedOriginal([nb.paragraph('Shared status: all systems operational.')]);
  const column = nb.columns(
    [nb.paragraph('Left column: deploys happen on Tuesdays.')],
    [nb.paragraph('Right column: freezes start on the 20th.')],
  );
  const handbook = ws.addPage({
    title: 'Engineering handbook',
    edited,
    blocks: [
      nb.heading(1, 'How we work'),
      nb.paragraph(
        'We value ',
        rt('clear writing', { bold: true }),
        ', ',
        rt('small changes', { italic: true }),
        ' and ',
        rt('npm test', { code: true }),
        '. See the ',
        rt('style guide', { link: 'https://acme.test/style' }),
        ' and ',
        inlineEquation('E=mc^2'),
        '.',
      ),
      nb.heading(2, 'Checklist'),
      nb.bullet('Write tests', [nb.bullet('Unit tests first'), nb.bullet('Then integration tests')]),
      nb.bullet('Review code'),
      nb.numbered('Open a pull request'),
      nb.numbered('Ask for review'),
      nb.todo('Install the CLI', true),
      nb.todo('Read the runbook', false),
      nb.quote('Simplicity is prerequisite for reliability.', [nb.paragraph('Edsger Dijkstra')]),
      nb.callout('💡', 'Ask in #eng-help when stuck.'),
      nb.code('typescript', 'const answer: number = 42;\nconsole.log(answer);', 'The answer'),
      nb.code('plain text', 'just text'),
      nb.table([
        ['Service', 'Owner'],
        ['Search', 'Ada'],
        ['Billing', 'Grace'],
      ]),
      nb.toggle('Why small changes?', [nb.paragraph('They are easier to review and to revert.')]),
      nb.heading(3, 'Toggle heading', [nb.paragraph('Hidden under a heading.')]),
      nb.equation('\\int_0^1 x^2 dx = \\frac{1}{3}'),
      nb.hostedImage('architecture.png', 'Architecture diagram'),
      nb.externalImage('https://images.acme.test/team.jpg', ''),
      nb.bookmark('https://acme.test/blog/how-we-ship', 'How we ship'),
      nb.embed('https://acme.test/embed/dashboard'),
      nb.video('https://video.acme.test/intro.mp4'),
      nb.file('https://files.acme.test/handbook.pdf', 'handbook.pdf'),
      nb.divider(),
      synced,
      column,
      nb.tableOfContents(),
      nb.unknown('meeting_notes', { title: [rt('Weekly sync notes')], status: 'done' }),
      nb.unknown('ai_summary', { rich_text: [rt('An AI summary of the page.')] }),
    ],
  });
  const deepDive = ws.addPage({
    title: 'Deep dive',
    parent: handbook,
    searchable: false,
    edited,
    blocks: [nb.paragraph('How the indexer batches work.'), nb.syncedCopy(synced.id)],
  });
  const runbook = ws.addPage({
    title: 'Runbook',
    parent: deepDive,
    searchable: false,
    edited,
    blocks: [nb.paragraph('Restart the indexer with kb worker.')],
  });
  const inColumn = ws.addPage({
    title: 'Column notes',
    parent: { block: column.children[1]!.id },
    edited,
    blocks: [nb.paragraph('A page that lives inside a column.')],
  });
  const onboarding = ws.addPage({
    title: 'Onboarding guide',
    edited,
    blocks: [nb.paragraph('Welcome to Acme. Your first task is to set up your laptop.')],
  });
  const firstWeek = ws.addPage({
    title: 'First week',
    parent: onboarding,
    edited,
    blocks: [nb.paragraph('Meet your buddy and ship a small fix.')],
  });
  const releaseNotes = ws.addPage({
    title: 'Release notes',
    edited,
    blocks: [
      nb.paragraph('Version 2.0 adds hybrid search.'),
      nb.linkToPage(onboarding),
      nb.paragraph('Read ', pageMention(onboarding, 'Onboarding guide'), ' first.'),
    ],
  });
  const { databaseId, dataSourceId } = ws.addDatabase({
    title: 'Services',
    parent: handbook,
    edited,
    schema: [
      ['Name', 'title'],
      ['Status', 'select'],
      ['Tier', 'number'],
      ['Tags', 'multi_select'],
      ['Owner', 'people'],
      ['Launched', 'date'],
      ['On call', 'checkbox'],
      ['Docs', 'url'],
      ['Notes', 'rich_text'],
    ],
  });
  const searchRow = ws.addRow(dataSourceId, {
    title: 'Search API',
    edited,
    props: {
      Status: np.select('Live'),
      Tier: np.number(1),
      Tags: np.multiSelect('core', 'search'),
      Owner: np.people('Ada Lovelace'),
      Launched: np.date('2023-04-01'),
      'On call': np.checkbox(true),
      Docs: np.url('https://docs.acme.test/search'),
      Notes: np.text('Answers queries | fast'),
    },
    blocks: [nb.paragraph('The search API answers semantic and keyword queries.')],
  });
  const billingRow = ws.addRow(dataSourceId, {
    title: 'Billing',
    edited,
    props: { Status: np.select('Live'), Tier: np.number(2) },
    blocks: [nb.paragraph('The billing service reconciles invoices every night.')],
  });
  const gatewayRow = ws.addRow(dataSourceId, {
    title: 'Gateway',
    edited,
    searchable: false,
    props: { Status: np.select('Beta') },
  });
  // In the trash from the start: never synced.
  const draft = ws.addPage({ title: 'Old draft', edited, blocks: [nb.paragraph('Outdated.')] });
  ws.trash(draft);
  return {
    workspace: ws,
    ids: {
      handbook,
      deepDive,
      runbook,
      onboarding,
      firstWeek,
      releaseNotes,
      inColumn,
      database: databaseId,
      dataSource: dataSourceId,
      searchRow,
      billingRow,
      gatewayRow,
      syncedOriginal: synced.id,
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The benchmark's workspace
// ---------------------------------------------------------------------------------------------------

function numberedId(kind: number, n: number, sub = 0): string {
  const hex = (v: number, width: number) => v.toString(16).padStart(width, '0');
  return `${hex(kind, 8)}-${hex(sub, 4)}-4000-8000-${hex(n, 12)}`;
}

const WORDS =
  'index search chunk vector embedding query latency throughput shard replica cache queue worker batch retry cursor token schema migration deploy rollback release monitor alert budget'.split(
    ' ',
  );

function sentence(seed: number, length: number): string {
  const words: string[] = [];
  for (let i = 0; i < length; i++)
    words.push(WORDS[(seed * 7 + i * 13 + ((seed >> 3) % 11)) % WORDS.length]!);
  const s = words.join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
}

/** A few KB of mixed content for document `n` at revision `rev`; block ids derive from both. */
function benchBody(kind: number, n: number, rev: number): FakeBlock[] {
  let sub = 0;
  const id = () => numberedId(kind, n, ++sub);
  const para = (seed: number) =>
    block(
      'paragraph',
      { rich_text: rich([sentence(seed, 60), ' ', rt(sentence(seed + 1, 8), { bold: true })]) },
      [],
      id(),
    );
  const listItem = (seed: number, children: FakeBlock[] = []) =>
    block('bulleted_list_item', { rich_text: rich([sentence(seed, 12)]) }, children, id());
  const blocks: FakeBlock[] = [
    block(
      'heading_2',
      { rich_text: rich([`Document ${n} revision ${rev}`]), is_toggleable: false },
      [],
      id(),
    ),
    para(n + rev),
    para(n + 3),
    para(n + 5),
    listItem(n + 7),
    listItem(n + 8),
    listItem(n + 9, n % 5 === 0 ? [listItem(n + 10)] : []),
    block(
      'code',
      {
        rich_text: rich([`const doc${n} = fetch(${rev});\nreturn doc${n}.body;`]),
        caption: [],
        language: 'javascript',
      },
      [],
      id(),
    ),
    block('to_do', { rich_text: rich([sentence(n + 11, 6)]), checked: n % 2 === 0 }, [], id()),
    block('quote', { rich_text: rich([sentence(n + 12, 20)]) }, [], id()),
  ];
  const tableId = id();
  blocks.push(
    block(
      'table',
      { table_width: 2, has_column_header: true, has_row_header: false },
      [
        block('table_row', { cells: [rich(['Metric']), rich(['Value'])] }, [], id()),
        block('table_row', { cells: [rich(['Latency']), rich([`${(n % 90) + 10} ms`])] }, [], id()),
        block('table_row', { cells: [rich(['Revision']), rich([String(rev)])] }, [], id()),
      ],
      tableId,
    ),
  );
  return blocks;
}

/**
 * `documents` documents: four in five are pages (every tenth one nested under the page before it and
 * missing from search, so the walk is exercised), one in five rows of one database, all with generated
 * bodies of a few KB.
 */
export const notionBenchWorkspace: BenchWorkspaceFactory = {
  type: 'notes',
  label: 'Notion',
  baseUrlSetting: 'KB_NOTES_BASE_URL',
  async start(documents) {
    const ws = new NotionWorkspace();
    const edited = '2024-05-20T08:42:00.000Z';
    const rowCount = documents >= 10 ? Math.floor(documents / 5) : 0;
    const pageCount = documents - rowCount;
    const docs: string[] = [];
    for (let j = 0; j < pageCount; j++) {
      const nested = j % 10 === 9;
      docs.push(
        ws.addPage({
          id: numberedId(1, j),
          title: `Page ${j}: ${sentence(j, 4).slice(0, -1)}`,
          parent: nested ? docs[j - 1]! : undefined,
          searchable: !nested,
          edited,
          generate: (rev) => benchBody(3, j, rev),
        }),
      );
    }
    if (rowCount > 0) {
      const { dataSourceId } = ws.addDatabase({
        id: numberedId(5, 1),
        dataSourceId: numberedId(6, 1),
        title: 'Bench records',
        parent: docs[0]!,
        edited,
        schema: [
          ['Name', 'title'],
          ['Status', 'select'],
          ['Score', 'number'],
        ],
      });
      for (let r = 0; r < rowCount; r++) {
        docs.push(
          ws.addRow(dataSourceId, {
            id: numberedId(2, r),
            title: `Record ${r}`,
            edited,
            props: { Status: np.select(r % 3 === 0 ? 'Done' : 'Open'), Score: np.number(r % 100) },
            generate: (rev) => benchBody(4, r, rev).slice(0, 5),
          }),
        );
      }
    }
    const server = await startFakeNotion({ workspace: ws });
    let round = 0;
    return {
      url: server.url,
      requests: server.requests,
      close: () => server.close(),
      source: { type: 'notes', access_token: NOTION_GOOD_TOKEN },
      edit(count) {
        const n = Math.min(count, docs.length);
        const step = docs.length / n;
        const edited: string[] = [];
        round++;
        for (let i = 0; i < n; i++) {
          const id = docs[Math.floor(i * step + (round % Math.max(1, Math.floor(step))))]!;
          ws.edit(id);
          edited.push(id);
        }
        return edited;
      },
    };
  },
};

/**
 * One database of `rows` rows (ten created a minute, searchable, small generated bodies) under one page,
 * queried against a per-query cap of `cap`: the benchmark of reading a data source past the cap.
 */
export async function notionRowCapWorkspace(
  rows: number,
  cap: number,
): Promise<BenchWorkspace & { workspace: NotionWorkspace; dataSourceId: string }> {
  const ws = new NotionWorkspace();
  ws.queryCap = cap;
  const edited = '2024-05-20T08:42:00.000Z';
  const home = ws.addPage({ id: numberedId(7, 0), title: 'Records home', edited });
  const { dataSourceId } = ws.addDatabase({
    id: numberedId(5, 2),
    dataSourceId: numberedId(6, 2),
    title: 'Large records',
    parent: home,
    edited,
    schema: [
      ['Name', 'title'],
      ['Score', 'number'],
    ],
  });
  const start = Date.parse('2023-01-01T00:00:00.000Z');
  const ids: string[] = [];
  for (let r = 0; r < rows; r++) {
    ids.push(
      ws.addRow(dataSourceId, {
        id: numberedId(8, r),
        title: `Record ${r}`,
        created: new Date(start + Math.floor(r / 10) * MINUTE).toISOString(),
        edited,
        props: { Score: np.number(r % 100) },
        generate: (rev) => benchBody(9, r, rev).slice(0, 3),
      }),
    );
  }
  const server = await startFakeNotion({ workspace: ws });
  let round = 0;
  return {
    url: server.url,
    requests: server.requests,
    close: () => server.close(),
    source: { type: 'notes', access_token: NOTION_GOOD_TOKEN },
    workspace: ws,
    dataSourceId,
    edit(count) {
      const picked = spreadPick(ids, count, round++);
      for (const id of picked) ws.edit(id);
      return picked;
    },
  };
}
