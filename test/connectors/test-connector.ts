/**
 * A connector with a content sync, for the job-engine tests only: it takes the `docs_space` slot (same
 * input fields and credential check as GitBook) and syncs from the fake source of
 * test-connector-source.ts. Tests plug it in with `ctx.connectors = { docs_space: testConnector }`.
 *
 * Cursor: `{ since }` is a position in the source's change feed; `{ since, after }` is a full pass in
 * progress (documents up to id `after` done; `since` is the feed position when the pass began, where
 * incremental syncs continue once it completes).
 */
import { z } from 'zod';
import { joinUrl } from '../../src/connectors/base-url.ts';
import {
  type DocsSpaceCredentials,
  docsSpaceConnector,
  gitbookHeaders,
} from '../../src/connectors/docs-space/index.ts';
import type { Connector, ConnectorContext, SourceDocument, SyncEvent } from '../../src/connectors/types.ts';

const cursorSchema = z.object({ since: z.number().int().min(0), after: z.string().optional() });
export type TestCursor = z.infer<typeof cursorSchema>;

const itemSchema = z.object({
  id: z.string(),
  seq: z.number(),
  deleted: z.boolean(),
  title: z.string().optional(),
  body: z.string().optional(),
  error: z.string().optional(),
});
const changesSchema = z.object({ items: z.array(itemSchema), next: z.number(), hasMore: z.boolean() });
const docsSchema = z.object({ items: z.array(itemSchema), seq: z.number(), hasMore: z.boolean() });

/**
 * The fake's id `tickets/7` is document `7` of table `docs_space_tickets`; a plain id is a page: so a test
 * can hold two documents of one id in two tables, as Zendesk's article 7 and ticket 7.
 */
function tableAndId(id: string): { table: string; externalId: string } {
  const slash = id.indexOf('/');
  return slash < 0
    ? { table: 'docs_space_pages', externalId: id }
    : { table: `docs_space_${id.slice(0, slash)}`, externalId: id.slice(slash + 1) };
}

function toDocument(item: z.infer<typeof itemSchema>): SourceDocument {
  return {
    ...tableAndId(item.id),
    title: item.title ?? item.id,
    url: `https://docs.example.test/${item.id}`,
    markdown: item.body ?? '',
    visibility: 'public',
    tags: ['docs_space', 'test'],
    version: String(item.seq),
  };
}

function* itemEvents(item: z.infer<typeof itemSchema>): Generator<SyncEvent<TestCursor>> {
  if (item.deleted) yield { kind: 'deleted', ...tableAndId(item.id) };
  else if (item.error)
    yield { kind: 'failure', ...tableAndId(item.id), error: new Error(item.error), retryable: false };
  else yield { kind: 'document', doc: toDocument(item) };
}

async function* sync(
  ctx: ConnectorContext<DocsSpaceCredentials>,
  opts: { cursor: TestCursor | null; mode: 'incremental' | 'full' },
): AsyncGenerator<SyncEvent<TestCursor>> {
  const headers = gitbookHeaders(ctx.credentials);
  const resumingFullPass = opts.cursor?.after !== undefined;
  if (opts.mode === 'full' || resumingFullPass) {
    let after = opts.cursor?.after ?? '';
    let since = resumingFullPass ? opts.cursor!.since : undefined;
    for (;;) {
      const page = await ctx.http.getJson(
        joinUrl(ctx.baseUrl, '/test/docs', { after, limit: 100 }),
        docsSchema,
        { headers },
      );
      since ??= page.seq;
      for (const item of page.items) yield* itemEvents(item);
      after = page.items.at(-1)?.id ?? after;
      if (!page.hasMore) break;
      yield { kind: 'checkpoint', cursor: { since, after } };
    }
    yield { kind: 'checkpoint', cursor: { since } };
    return;
  }
  let since = opts.cursor?.since ?? 0;
  for (;;) {
    const page = await ctx.http.getJson(
      joinUrl(ctx.baseUrl, '/test/changes', { since, limit: 100 }),
      changesSchema,
      {
        headers,
      },
    );
    for (const item of page.items) yield* itemEvents(item);
    since = page.next;
    yield { kind: 'checkpoint', cursor: { since } };
    if (!page.hasMore) break;
  }
}

export const testConnector: Connector<
  DocsSpaceCredentials,
  TestCursor,
  z.infer<typeof docsSpaceConnector.credentials>
> = {
  ...docsSpaceConnector,
  label: 'Test source',
  cursor: cursorSchema,
  sync,
};
