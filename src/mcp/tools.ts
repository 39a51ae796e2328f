/**
 * The MCP server's tools. Each one is a call (or a few) of the public API through the typed client, with a
 * description written for an agent: what the tool is for, and what comes back. Arguments are checked by
 * the API itself (its messages name the field), so the schemas here describe rather than duplicate its
 * rules; the ranges they do state are the API's.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { type KbClient, ok, type paths, type SyncJob } from '../client/index.ts';
import { type ErrorSink, runTool, UsageProblem } from './results.ts';

/** A source type as the API's request schemas spell it (the service checks the value). */
type SourceType = NonNullable<
  paths['/api/connect/run-sync']['post']['requestBody']['content']['application/json']['type']
>;

const SYNC_DONE = new Set(['succeeded', 'failed', 'cancelled', 'incomplete']);
const CRAWL_DONE = new Set(['completed', 'failed', 'cancelled']);
/** The largest page the API's job list answers. */
const JOB_PAGE = 100;

const connectionRef = {
  type: z
    .string()
    .max(100)
    .optional()
    .describe(
      'Source type of the connection (`docs_space`, `support_desk`, ... or the product name, e.g. `gitbook`); give this or connectionId',
    ),
  connectionId: z
    .string()
    .max(100)
    .optional()
    .describe('Id of the connection (from list_sources); give this or type'),
};

function refOf(args: { type?: string | undefined; connectionId?: string | undefined }) {
  return {
    ...(args.type === undefined ? {} : { type: args.type as SourceType }),
    ...(args.connectionId === undefined ? {} : { connectionId: args.connectionId }),
  };
}

/** A sync job without its long failure list: what an agent needs to follow it. */
function syncJobSummary(job: SyncJob) {
  return {
    jobId: job.jobId,
    connectionId: job.connectionId,
    status: job.status,
    jobType: job.jobType,
    startTime: job.startTime,
    finishedAt: job.finishedAt,
    durationMs: job.duration,
    documents: job.documents,
    rowsSynced: job.rowsSynced,
    bytesSynced: job.bytesSynced,
    failureCount: job.failureCount,
    ...(job.error === undefined ? {} : { error: job.error }),
    ...(job.failures.length ? { firstFailures: job.failures.slice(0, 10) } : {}),
  };
}

/**
 * A sync job by id. The API lists jobs per connection, newest first, so each named (or, with none named,
 * each of the organization's) connection's list is read until the job shows (a job just started is on the
 * first page).
 */
async function findSyncJob(
  client: KbClient,
  jobId: number,
  ref: ReturnType<typeof refOf>,
): Promise<SyncJob | null> {
  let refs: Array<ReturnType<typeof refOf>> = [ref];
  if (ref.type === undefined && ref.connectionId === undefined) {
    const { data } = await ok(client.GET('/api/connect/connections'));
    const last = data.find((c) => c.lastJob?.jobId === jobId)?.lastJob;
    if (last) return last;
    refs = data.map((c) => ({ connectionId: c.id }));
  }
  for (const r of refs) {
    for (let offset = 0; ; offset += JOB_PAGE) {
      const page = await ok(
        client.GET('/api/connect/connection-sync-jobs', {
          params: { query: { ...r, limit: JOB_PAGE, offset } },
        }),
      );
      const job = page.data.find((j) => j.jobId === jobId);
      if (job) return job;
      // Ids are random, so no page says the job is not further down: read on until the list ends.
      if (page.next === undefined || page.data.length === 0) break;
    }
  }
  return null;
}

/** The indexing side of progress: how much of what was stored is searchable yet, and when the rest will be. */
async function indexingProgress(client: KbClient) {
  const s = await ok(client.GET('/api/connect/knowledgebase-items/stats'));
  return {
    items: s.total,
    pending: s.byIndexingStatus.pending,
    indexed: s.byIndexingStatus.indexed,
    failed: s.byIndexingStatus.failed,
    chunks: s.chunks,
    ratePerSecond: s.indexer.ratePerSecond,
    queuedAhead: s.indexer.queuedAhead,
    etaSeconds: s.indexer.etaSeconds,
  };
}

// The tools' argument schemas, built once per process (a server is built per /mcp request).
const SEARCH_INPUT = {
  query: z.string().max(2000).describe('What to look for, in natural language (at most 2,000 characters)'),
  limit: z.number().int().min(1).max(100).optional().describe('How many passages, 1-100 (default 10)'),
  mode: z
    .enum(['semantic', 'hybrid', 'keyword'])
    .optional()
    .describe(
      '`semantic` (default: by meaning), `hybrid` (meaning and exact words fused: best for names, codes, ' +
        'error messages) or `keyword` (exact words only)',
    ),
  tags: z.array(z.string()).max(50).optional().describe('Only items carrying at least one of these tags'),
  sourceTypes: z
    .array(z.enum(['integration', 'crawl', 'upload']))
    .optional()
    .describe('Only items from these origins: `integration` (synced sources), `crawl`, `upload`'),
  visibility: z
    .array(z.enum(['public', 'private']))
    .optional()
    .describe('Only items of this visibility'),
  cosineDistanceThreshold: z
    .number()
    .min(0)
    .max(2)
    .optional()
    .describe('Only passages at most this cosine distance from the query (e.g. 0.6 keeps close matches)'),
};

const GET_ITEM_INPUT = { id: z.string().min(1).max(200).describe('The item id') };

const LIST_ITEMS_INPUT = {
  page: z.number().int().min(1).optional().describe('Page number from 1 (default 1)'),
  limit: z.number().int().min(1).max(100).optional().describe('Items per page, 1-100 (default 20)'),
  search: z.string().max(500).optional().describe('Substring to match in title or content'),
};

const START_SYNC_INPUT = {
  ...connectionRef,
  jobType: z.enum(['sync', 'reset']).optional().describe('`sync` (default, incremental) or `reset` (full)'),
};

const START_CRAWL_INPUT = {
  url: z.string().max(2000).describe('Start URL: absolute http or https'),
  limit: z.number().int().min(1).optional().describe('Most pages to store (default 100)'),
  includePaths: z
    .array(z.string())
    .optional()
    .describe(
      'Regular expressions (RE2) on the URL path; when given, only matching pages are kept, e.g. ["^/docs/"]',
    ),
  excludePaths: z
    .array(z.string())
    .optional()
    .describe('Regular expressions (RE2) on the URL path; matching pages are skipped (wins over includes)'),
  allowExternalLinks: z
    .boolean()
    .optional()
    .describe("Follow links to other sites (default false: the start URL's site only)"),
  maxDepth: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Link depth from the start URL (0: the start page only); when set, sitemaps are not read'),
  tags: z.array(z.string()).max(50).optional().describe('Tags given to every crawled item'),
};

const JOB_PROGRESS_INPUT = {
  syncJobId: z.number().int().min(1).optional().describe('A sync job id (from start_sync or list_sources)'),
  crawlId: z.string().min(1).max(200).optional().describe('A crawl job id (from start_crawl)'),
  ...connectionRef,
};

/** The organization's connections and the source types it could connect (the list_sources tool). */
async function listSources(client: KbClient) {
  const [connections, types] = await Promise.all([
    ok(client.GET('/api/connect/connections')),
    ok(client.GET('/api/connect/connection-types')),
  ]);
  return {
    connections: connections.data.map((c) => ({
      id: c.id,
      type: c.type,
      status: c.status,
      schedule: c.schedule,
      nextSyncAt: c.nextSyncAt,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
      lastJob: c.lastJob ? syncJobSummary(c.lastJob) : null,
    })),
    connectableTypes: types.data.map((t) => ({
      type: t.type,
      alias: t.alias,
      label: t.label,
      connected: connections.data.some((c) => c.type === t.type),
      oauth: t.oauth !== null,
      fields: t.fields.map((f) => ({ name: f.name, required: f.required, description: f.description })),
    })),
  };
}

/** How far a sync or crawl is, and how much is searchable yet (the get_job_progress tool). */
async function jobProgress(
  client: KbClient,
  args: {
    syncJobId?: number | undefined;
    crawlId?: string | undefined;
    type?: string | undefined;
    connectionId?: string | undefined;
  },
) {
  if ((args.syncJobId === undefined) === (args.crawlId === undefined)) {
    throw new UsageProblem('Give exactly one of syncJobId and crawlId.');
  }
  if (args.crawlId !== undefined) {
    const [job, indexing] = await Promise.all([
      ok(client.GET('/api/connect/crawling/{id}', { params: { path: { id: args.crawlId } } })),
      indexingProgress(client),
    ]);
    return { kind: 'crawl', done: CRAWL_DONE.has(job.status), job, indexing };
  }
  const jobId = args.syncJobId!;
  const job = await findSyncJob(client, jobId, refOf(args));
  if (!job) throw new UsageProblem(`No sync job ${jobId} exists in this organization.`);
  return {
    kind: 'sync',
    done: SYNC_DONE.has(job.status),
    job: syncJobSummary(job),
    indexing: await indexingProgress(client),
  };
}

/**
 * Registers every tool, in the order an agent lists them. Each tool's registration (the title,
 * description and schema an agent reads) is a function of its own below; what a tool does beyond one API
 * call lives in a named function above.
 */
export function registerTools(server: McpServer, client: KbClient, onError: ErrorSink): void {
  registerSearch(server, client, onError);
  registerGetItem(server, client, onError);
  registerListItems(server, client, onError);
  registerListSources(server, client, onError);
  registerStartSync(server, client, onError);
  registerStartCrawl(server, client, onError);
  registerGetJobProgress(server, client, onError);
}

function registerSearch(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerTool(
    'search',
    {
      title: 'Search the knowledge base',
      description:
        "Search the organization's knowledge base (synced sources, crawled pages and uploads) for passages " +
        'relevant to a question. Returns `result`: passages (chunks) nearest first, each with `title`, ' +
        '`chunk_plain_text` (the passage), `distance` (cosine distance to the query: 0 is identical, lower is ' +
        'closer), `item_id`, `source_url`, `source_type`, `tags` and `visibility`. Read a whole document with ' +
        'get_item and its `item_id`. Items are searchable once indexed (see get_job_progress).',
      inputSchema: SEARCH_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      runTool('search', onError, () =>
        ok(client.POST('/api/consume/search', { body: { ...args, includeEmbedding: false } })),
      ),
  );
}

function registerGetItem(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerTool(
    'get_item',
    {
      title: 'Read an item',
      description:
        'Read one knowledge-base item in full: its `content` (the whole document as markdown or plain text) ' +
        'with `title`, `source_url`, `source_type`, `source_table_name`, `tags`, `visibility`, ' +
        '`indexing_status`, `created_at` and `updated_at`. Use the `item_id` of a search hit or the `id` from ' +
        'list_items. Returns `{item}`; an id that does not exist in this organization is an error.',
      inputSchema: GET_ITEM_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ id }) =>
      runTool('get_item', onError, () =>
        ok(client.GET('/api/connect/knowledgebase-items/{id}', { params: { path: { id } } })),
      ),
  );
}

function registerListItems(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerTool(
    'list_items',
    {
      title: 'List items',
      description:
        "Page through the organization's items, newest first, optionally filtered by a case-insensitive " +
        'word, word prefix or phrase of title or content (not semantic: use search for questions). Returns `items` (id, title, ' +
        'source_type, source_url, tags, visibility, indexing_status, dates; no content: use get_item) and ' +
        '`pagination` (current_page, total_pages, total_items, has_next_page).',
      inputSchema: LIST_ITEMS_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      runTool('list_items', onError, () =>
        ok(client.POST('/api/connect/knowledgebase-items/query', { body: args })),
      ),
  );
}

function registerListSources(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerTool(
    'list_sources',
    {
      title: 'List sources',
      description:
        "The organization's connected sources and the source types it could connect. Returns `connections` " +
        '(id, type, status `active`/`inactive`, schedule, and `lastJob`: the latest sync with its status and ' +
        'document counts) and `connectableTypes` (each `type` with the product name it stands for as ' +
        '`alias` and `label`, whether it is `connected`, whether it connects through OAuth consent (`oauth`), and the `fields` a connection needs). Connecting a source takes its credentials, which ' +
        'this server does not handle: a person connects it in the console or with POST /api/connect/connection. ' +
        'Start a sync of a connected source with start_sync.',
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => runTool('list_sources', onError, () => listSources(client)),
  );
}

function registerStartSync(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerTool(
    'start_sync',
    {
      title: 'Start a sync',
      description:
        'Start syncing a connected source (name it by `type` or `connectionId`, see list_sources): `sync` ' +
        'fetches what changed since the last sync, `reset` re-reads everything and removes what the source ' +
        'no longer has. Answers at once with `jobId`; the sync runs in the background. Follow it with ' +
        'get_job_progress({syncJobId}). A sync already pending or running for the connection is an error ' +
        'naming its job.',
      inputSchema: START_SYNC_INPUT,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    (args) =>
      runTool('start_sync', onError, async () => {
        const ref = refOf(args);
        const { jobId } = await ok(
          client.POST('/api/connect/run-sync', {
            body: { ...ref, ...(args.jobType ? { jobType: args.jobType } : {}) },
          }),
        );
        return {
          jobId,
          ...ref,
          next: `Call get_job_progress with ${JSON.stringify({ syncJobId: jobId, ...ref })}.`,
        };
      }),
  );
}

function registerStartCrawl(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerTool(
    'start_crawl',
    {
      title: 'Crawl a website',
      description:
        "Crawl a website into the knowledge base: the start URL's site is read through its sitemaps and " +
        "links (robots.txt honoured), each page's main content stored as a `crawl` item; crawling a URL again " +
        'updates its pages. Answers at once with the crawl `job` (its `id`, status `idle`); follow it with ' +
        'get_job_progress({crawlId}).',
      inputSchema: START_CRAWL_INPUT,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    (args) =>
      runTool('start_crawl', onError, async () => {
        const job = await ok(client.POST('/api/connect/crawling/', { body: args }));
        return { job, next: `Call get_job_progress with ${JSON.stringify({ crawlId: job.id })}.` };
      }),
  );
}

function registerGetJobProgress(server: McpServer, client: KbClient, onError: ErrorSink): void {
  server.registerTool(
    'get_job_progress',
    {
      title: 'Follow a sync or crawl',
      description:
        'How far a sync or a crawl is, and how much of the knowledge base is searchable yet. Give `syncJobId` ' +
        '(from start_sync; `type` or `connectionId` narrows the look-up) or `crawlId` (from start_crawl). ' +
        'Returns `done` (the job ended), `job` (a sync: status and `documents` seen, stored, unchanged, ' +
        'deleted and failed; a crawl: status, `total_pages` admitted, `completed_pages`, `outcomes` and ' +
        "`refused` reasons) and `indexing` (items `pending` and `indexed`, `chunks`, the indexer's " +
        '`ratePerSecond` and `etaSeconds` until pending items are searchable). Call it again until `done` ' +
        'and `indexing.pending` is 0.',
      inputSchema: JOB_PROGRESS_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => runTool('get_job_progress', onError, () => jobProgress(client, args)),
  );
}
