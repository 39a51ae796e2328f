import type { App, RouteDeps } from '../context.ts';
import * as adminKeys from './admin-keys.ts';
import * as adminOrganizations from './admin-organizations.ts';
import * as connectionCreate from './connection-create.ts';
import * as connectionDelete from './connection-delete.ts';
import * as connectionList from './connection-list.ts';
import * as connectionStatus from './connection-status.ts';
import * as connectionTypes from './connection-types.ts';
import * as consolePage from './console.ts';
import * as crawlCancel from './crawl-cancel.ts';
import * as crawlCreate from './crawl-create.ts';
import * as crawlGet from './crawl-get.ts';
import * as crawlList from './crawl-list.ts';
import * as health from './health.ts';
import * as itemsDelete from './items-delete.ts';
import * as itemsGet from './items-get.ts';
import * as itemsQuery from './items-query.ts';
import * as itemsReembed from './items-reembed.ts';
import * as itemsStats from './items-stats.ts';
import * as itemsUpdate from './items-update.ts';
import * as itemsUpload from './items-upload.ts';
import * as mcp from './mcp.ts';
import * as oauthCallback from './oauth-callback.ts';
import * as oauthInitiate from './oauth-initiate.ts';
import * as runSync from './run-sync.ts';
import * as search from './search.ts';
import * as secretIdExists from './secret-id-exists.ts';
import * as syncJobsList from './sync-jobs-list.ts';
import * as webhookDeliveriesList from './webhook-deliveries-list.ts';
import * as webhookEndpointCreate from './webhook-endpoint-create.ts';
import * as webhookEndpointDelete from './webhook-endpoint-delete.ts';
import * as webhookEndpointList from './webhook-endpoint-list.ts';
import * as webhookEndpointUpdate from './webhook-endpoint-update.ts';

/** Every endpoint lives in its own file; adding one means one file and one line here. */
const routes: Array<{ register(app: App, deps: RouteDeps): void }> = [
  health,
  itemsQuery,
  itemsStats,
  itemsGet,
  itemsUpdate,
  itemsDelete,
  itemsUpload,
  itemsReembed,
  search,
  adminOrganizations,
  adminKeys,
  connectionCreate,
  connectionDelete,
  connectionStatus,
  connectionList,
  connectionTypes,
  runSync,
  syncJobsList,
  oauthInitiate,
  oauthCallback,
  secretIdExists,
  crawlCreate,
  crawlList,
  crawlGet,
  crawlCancel,
  webhookEndpointCreate,
  webhookEndpointList,
  webhookEndpointUpdate,
  webhookEndpointDelete,
  webhookDeliveriesList,
  mcp,
  consolePage,
];

export async function registerRoutes(app: App, deps: RouteDeps): Promise<void> {
  for (const r of routes) r.register(app, deps);
}
