/**
 * The typed client of the service's public API: openapi-fetch over the types openapi-typescript generates
 * from /openapi.json (api-types.ts; `node scripts/client-types.ts` regenerates them, and
 * test/client/drift.test.ts fails when they drift from the served document). The CLI, the console and the
 * MCP server reach the service only through it, so they use exactly what any other caller can.
 *
 * It imports nothing else from src/: it runs in Node and, bundled, in the browser.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './api-types.ts';

export type { components, paths };
export type KbClient = Client<paths>;
type Schemas = components['schemas'];
export type Connection = Schemas['Connection'];
export type CrawlJob = Schemas['CrawlJob'];
export type ItemStats = Schemas['ItemStats'];
export type KnowledgeBaseItem = Schemas['KnowledgeBaseItem'];
export type Pagination = Schemas['Pagination'];
export type SearchResult = Schemas['SearchResult'];
export type SyncJob = Schemas['SyncJob'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
/** The event types an endpoint may ask for. */
export type WebhookEventType = NonNullable<
  paths['/api/connect/webhook-endpoints']['post']['requestBody']['content']['application/json']['events']
>[number];
/** Every event type, for pickers and checks (the type above keeps the list in step with the API). */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'sync.started',
  'sync.finished',
  'crawl.finished',
  'items.indexed',
  'connection.needs_consent',
];

export function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/** An answer of the API other than 2xx, with the API's own error code and message. */
export class KbApiError extends Error {
  readonly status: number;
  /** The API's error code (`invalid_request`, `not_found`, ...), or `http_<status>` when the body had none. */
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'KbApiError';
    this.status = status;
    this.code = code;
  }
}

interface KbClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An API key of the organization (`kb_...`); sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Another fetch (tests, or a service calling itself in-process). */
  fetch?: (input: Request) => Promise<Response>;
}

export function createKbClient(opts: KbClientOptions): KbClient {
  const client = createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const { apiKey } = opts;
  if (apiKey) {
    const bearer: Middleware = {
      onRequest({ request }) {
        request.headers.set('authorization', `Bearer ${apiKey}`);
        return request;
      },
    };
    client.use(bearer);
  }
  return client;
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a call, or a {@link KbApiError} carrying the API's `{error, message}`. For callers that
 * want exceptions rather than openapi-fetch's `{data, error}` pair:
 *
 *   const job = await ok(client.POST('/api/connect/run-sync', { body: { ... } }));
 */
export async function ok<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { error?: unknown; message?: unknown };
  const code = typeof body.error === 'string' ? body.error : `http_${response.status}`;
  const message =
    typeof body.message === 'string' ? body.message : `${response.status} ${response.statusText || 'error'}`;
  throw new KbApiError(response.status, code, message);
}
