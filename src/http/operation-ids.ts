/**
 * The `operationId` of every operation of the OpenAPI document, by method and path, in one table so they
 * stay stable (generated clients name their functions after them) and no two collide. A route that is
 * documented but missing here fails the app's start (operationIdOf), so a new endpoint cannot ship
 * without one.
 */
const OPERATION_IDS: Record<string, string> = {
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'POST /api/connect/knowledgebase-items/query': 'queryItems',
  'GET /api/connect/knowledgebase-items/stats': 'getItemStats',
  'GET /api/connect/knowledgebase-items/{id}': 'getItem',
  'PUT /api/connect/knowledgebase-items': 'updateItems',
  'DELETE /api/connect/knowledgebase-items': 'deleteItems',
  'POST /api/connect/knowledgebase-items': 'uploadItem',
  'POST /api/connect/knowledgebase-items/reembed': 'reembedItems',
  'POST /api/consume/search': 'search',
  'POST /api/admin/organizations': 'createOrganization',
  'POST /api/admin/organizations/{id}/keys': 'createApiKey',
  'DELETE /api/admin/keys/{id}': 'revokeApiKey',
  'POST /api/connect/connection': 'createConnection',
  'DELETE /api/connect/connection': 'deleteConnection',
  'PATCH /api/connect/set-connection-status': 'setConnectionStatus',
  'GET /api/connect/connections': 'listConnections',
  'GET /api/connect/connection-types': 'listConnectionTypes',
  'POST /api/connect/run-sync': 'runSync',
  'GET /api/connect/connection-sync-jobs': 'listSyncJobs',
  'POST /api/connect/oauth/initiate': 'initiateOAuth',
  'GET /api/connect/oauth/callback': 'oauthCallback',
  'GET /api/connect/secret-id-exists': 'secretIdExists',
  'POST /api/connect/crawling/': 'createCrawl',
  'GET /api/connect/crawling/': 'listCrawls',
  'GET /api/connect/crawling/{id}': 'getCrawl',
  'DELETE /api/connect/crawling/{id}': 'cancelCrawl',
  'POST /api/connect/webhook-endpoints': 'createWebhookEndpoint',
  'GET /api/connect/webhook-endpoints': 'listWebhookEndpoints',
  'PATCH /api/connect/webhook-endpoints/{id}': 'updateWebhookEndpoint',
  'DELETE /api/connect/webhook-endpoints/{id}': 'deleteWebhookEndpoint',
  'GET /api/connect/webhook-endpoints/{id}/deliveries': 'listWebhookDeliveries',
};

/** The operationId of a documented route (Fastify's `:id` is OpenAPI's `{id}`); throws when it has none. */
export function operationIdOf(method: string, url: string): string {
  const key = `${method.toUpperCase()} ${url.replace(/:(\w+)/g, '{$1}')}`;
  const id = OPERATION_IDS[key];
  if (!id) throw new Error(`no operationId for ${key}: add it to src/http/operation-ids.ts`);
  return id;
}
