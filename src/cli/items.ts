/**
 * `kb items list|get|upload|retitle|tag|delete`: what the item endpoints allow (query, get with content,
 * upload, update of title and tags, delete).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { type KnowledgeBaseItem, ok, type Pagination } from '../client/index.ts';
import { CliError, describeFailure, UsageError } from './errors.ts';
import { count, oneLine, table } from './format.ts';
import { displayMode, intervalMs, parseInterval, ProgressDisplay } from './progress.ts';
import {
  collect,
  connect,
  intOption,
  printJson,
  type Remote,
  type RemoteOptions,
  remoteOptions,
} from './remote.ts';
import { followIndexing } from './stats.ts';

/** A page of items as a table, newest first, with where the page is. */
export function formatItems(items: KnowledgeBaseItem[], page: Pagination): string {
  if (items.length === 0)
    return page.total_items === 0 ? 'no items' : `no items on page ${page.current_page}`;
  const rows = [
    ['ID', 'STATUS', 'SOURCE', 'UPDATED', 'TITLE'],
    ...items.map((i) => [
      i.id,
      i.indexing_status,
      i.source_type,
      i.updated_at.slice(0, 16).replace('T', ' '),
      oneLine(i.title, 80),
    ]),
  ];
  const more = page.has_next_page ? `; --page ${page.current_page + 1} for more` : '';
  return `${table(rows)}\npage ${page.current_page} of ${page.total_pages}, ${count(page.total_items)} items${more}`;
}

/** An upload's title: --title, else the document's first `# heading`, else the file's name. */
export function titleFor(file: string, content: string): string {
  const heading = /^#\s+(.+?)\s*#*\s*$/m.exec(content.slice(0, 4000));
  if (heading?.[1]) return heading[1].slice(0, 1000);
  return path.basename(file).replace(/\.[^.]+$/, '') || file;
}

async function readInput(file: string): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

interface UploadOptions extends RemoteOptions {
  title?: string;
  tag?: string[];
  visibility?: string;
  sourceUrl?: string;
  wait?: boolean;
  interval?: number;
}

interface TagOptions extends RemoteOptions {
  add?: string[];
  remove?: string[];
  clear?: boolean;
}

type ListOptions = RemoteOptions & { search?: string; page?: number; limit?: number };

/** Registers the `items` commands, one function each: its commander definition (the help) and its action. */
export function register(program: Command): void {
  const items = program.command('items').description('list, read, upload, retitle, tag and delete items');
  registerList(items);
  registerGet(items);
  registerUpload(items);
  registerRetitle(items);
  registerTag(items);
  registerDelete(items);
}

function registerList(items: Command): void {
  remoteOptions(
    items
      .command('list')
      .description('the items, newest first, a page at a time')
      .option('--search <text>', 'only items whose title or content contains this (case-insensitive)')
      .option('--page <n>', 'page number from 1', intOption('--page', 1, 1_000_000))
      .option('--limit <n>', 'items a page, 1-100 (service default 20)', intOption('--limit', 1, 100)),
  ).action(listItems);
}

async function listItems(opts: ListOptions): Promise<void> {
  const remote = connect(opts);
  const answer = await ok(
    remote.client.POST('/api/connect/knowledgebase-items/query', {
      body: {
        ...(opts.search !== undefined ? { search: opts.search } : {}),
        ...(opts.page !== undefined ? { page: opts.page } : {}),
        ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      },
    }),
  );
  if (remote.json) printJson(answer);
  else console.log(formatItems(answer.items, answer.pagination));
}

function registerGet(items: Command): void {
  remoteOptions(
    items.command('get').description('one item with its full text').argument('<id>', 'item id'),
  ).action(showItem);
}

async function showItem(id: string, opts: RemoteOptions): Promise<void> {
  const remote = connect(opts);
  const { item } = await ok(
    remote.client.GET('/api/connect/knowledgebase-items/{id}', { params: { path: { id } } }),
  );
  if (remote.json) {
    printJson({ item });
    return;
  }
  const meta = [
    `id       ${item.id}`,
    `source   ${item.source_type} (${item.source_table_name})${item.source_url ? ` ${item.source_url}` : ''}`,
    `status   ${item.indexing_status}, ${item.visibility}`,
    `tags     ${item.tags.length > 0 ? item.tags.join(', ') : '-'}`,
    `updated  ${item.updated_at} (created ${item.created_at})`,
  ];
  console.log(`${item.title}\n${meta.join('\n')}\n\n${item.content}`);
}

function registerUpload(items: Command): void {
  remoteOptions(
    items
      .command('upload')
      .description('upload documents (markdown or text); each becomes an item, searchable once indexed')
      .argument('<files...>', 'files to upload; - reads one document from stdin')
      .option(
        '--title <title>',
        "the title (one file only; default: the document's first # heading, else the file name)",
      )
      .option('--tag <tag>', 'tag every uploaded item (repeatable)', collect)
      .option('--visibility <v>', 'public | private (service default public)')
      .option('--source-url <url>', 'the URL the document comes from (one file only)')
      .option('--wait', 'follow indexing until the uploads are searchable')
      .option(
        '--interval <seconds>',
        'how often progress is read (default 1 on a terminal, else 5)',
        parseInterval,
      ),
  ).action(uploadFiles);
}

/** The upload options that cannot go together, refused before anything is read or sent. */
function checkUploadOptions(files: string[], opts: UploadOptions): void {
  if (files.length > 1 && (opts.title || opts.sourceUrl)) {
    throw new UsageError('--title and --source-url name one document; upload one file with them');
  }
  if (files.includes('-') && !opts.title) throw new UsageError('give --title for a document read from stdin');
  if (opts.visibility && opts.visibility !== 'public' && opts.visibility !== 'private') {
    throw new UsageError(`--visibility must be public or private, not "${opts.visibility}"`);
  }
}

/** Uploads one file as an item. */
async function uploadFile(remote: Remote, file: string, opts: UploadOptions): Promise<KnowledgeBaseItem> {
  const content = await readInput(file);
  const { item } = await ok(
    remote.client.POST('/api/connect/knowledgebase-items', {
      body: {
        title: opts.title ?? titleFor(file, content),
        content,
        ...(opts.tag ? { tags: opts.tag } : {}),
        ...(opts.visibility ? { visibility: opts.visibility as 'public' | 'private' } : {}),
        ...(opts.sourceUrl ? { source_url: opts.sourceUrl } : {}),
      },
    }),
  );
  return item;
}

/** Uploads each file in turn; a file that fails is reported and the others go on. */
async function uploadFiles(files: string[], opts: UploadOptions): Promise<void> {
  checkUploadOptions(files, opts);
  const remote = connect(opts);
  const uploaded: KnowledgeBaseItem[] = [];
  const failed: Array<{ file: string; message: string }> = [];
  const mode = displayMode({ json: remote.json, isTTY: Boolean(process.stderr.isTTY) });
  // A bar for many files; one or two need none.
  const display =
    files.length > 2 ? new ProgressDisplay(mode, { minGapMs: intervalMs(opts.interval, mode) }) : null;
  for (const [n, file] of files.entries()) {
    try {
      const item = await uploadFile(remote, file, opts);
      uploaded.push(item);
      if (!remote.json && !display) console.log(`uploaded ${item.id}  ${oneLine(item.title, 80)}`);
    } catch (err) {
      const { message } = describeFailure(err);
      failed.push({ file, message });
      if (!remote.json) process.stderr.write(`kb: ${file}: ${message}\n`);
    }
    display?.update({
      label: 'upload',
      done: n + 1,
      total: files.length,
      unit: 'files',
      details: { uploaded: uploaded.length, failed: failed.length },
    });
  }
  display?.stop();
  if (opts.wait && uploaded.length > 0) {
    await followIndexing(remote, { label: 'indexing', interval: opts.interval });
  }
  if (remote.json) printJson({ uploaded, failed });
  else if (display || opts.wait) {
    console.log(
      `uploaded ${count(uploaded.length)} of ${count(files.length)} files${opts.wait ? ', searchable now' : ' (searchable once indexed; kb stats --wait follows)'}`,
    );
  }
  if (failed.length > 0)
    throw new CliError(`${count(failed.length)} of ${count(files.length)} uploads failed`);
}

function registerRetitle(items: Command): void {
  remoteOptions(
    items
      .command('retitle')
      .description("change an item's title")
      .argument('<id>', 'item id')
      .argument('<title...>', 'the new title (words are joined)'),
  ).action(retitleItem);
}

async function retitleItem(id: string, words: string[], opts: RemoteOptions): Promise<void> {
  const remote = connect(opts);
  const title = words.join(' ');
  const answer = await ok(remote.client.PUT('/api/connect/knowledgebase-items', { body: [{ id, title }] }));
  if (answer.notFound.includes(id)) throw new CliError(`no item with id ${id} in this organization`);
  if (remote.json) printJson(answer);
  else console.log(`retitled ${id}: ${title}`);
}

function registerTag(items: Command): void {
  remoteOptions(
    items
      .command('tag')
      .description("set an item's tags, or add and remove some")
      .argument('<id>', 'item id')
      .argument('[tags...]', 'the tags the item gets (replacing its tags)')
      .option('--add <tag>', 'add a tag (repeatable)', collect)
      .option('--remove <tag>', 'remove a tag (repeatable)', collect)
      .option('--clear', 'remove every tag'),
  ).action(tagItem);
}

async function tagItem(id: string, tags: string[], opts: TagOptions): Promise<void> {
  const relative = Boolean(opts.add || opts.remove);
  if ([tags.length > 0, relative, Boolean(opts.clear)].filter(Boolean).length !== 1) {
    throw new UsageError('give the tags, or --add/--remove, or --clear');
  }
  const remote = connect(opts);
  // The update endpoint takes the title with the tags: read the item first.
  const { item } = await ok(
    remote.client.GET('/api/connect/knowledgebase-items/{id}', { params: { path: { id } } }),
  );
  let next = opts.clear ? [] : tags;
  if (relative) {
    const removed = new Set(opts.remove ?? []);
    next = [...new Set([...item.tags, ...(opts.add ?? [])])].filter((t) => !removed.has(t));
  }
  const answer = await ok(
    remote.client.PUT('/api/connect/knowledgebase-items', {
      body: [{ id, title: item.title, tags: next }],
    }),
  );
  if (answer.notFound.includes(id)) throw new CliError(`no item with id ${id} in this organization`);
  if (remote.json) printJson({ ...answer, tags: next });
  else console.log(`tagged ${id}: ${next.length > 0 ? next.join(', ') : '(no tags)'}`);
}

function registerDelete(items: Command): void {
  remoteOptions(
    items.command('delete').description('delete items (and their chunks)').argument('<ids...>', 'item ids'),
  ).action(deleteItems);
}

async function deleteItems(ids: string[], opts: RemoteOptions): Promise<void> {
  const remote = connect(opts);
  const unique = [...new Set(ids)];
  const answer = await ok(
    remote.client.DELETE('/api/connect/knowledgebase-items', { body: { ids: unique } }),
  );
  if (remote.json) printJson(answer);
  else console.log(`deleted ${count(answer.deleted)} item${answer.deleted === 1 ? '' : 's'}`);
  if (answer.deleted < unique.length) {
    throw new CliError(
      `${count(unique.length - answer.deleted)} of ${count(unique.length)} ids were not found in this organization`,
    );
  }
}
