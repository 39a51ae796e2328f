import type { App, AppContext } from '../context.ts';
import * as adminKeys from './admin-keys.ts';
import * as adminOrganizations from './admin-organizations.ts';
import * as health from './health.ts';
import * as itemsDelete from './items-delete.ts';
import * as itemsQuery from './items-query.ts';
import * as itemsUpdate from './items-update.ts';
import * as itemsUpload from './items-upload.ts';
import * as search from './search.ts';

/** Every endpoint lives in its own file; adding one means one file and one line here. */
const routes: Array<{ register(app: App, ctx: AppContext): void }> = [
  health,
  itemsQuery,
  itemsUpdate,
  itemsDelete,
  itemsUpload,
  search,
  adminOrganizations,
  adminKeys,
];

export async function registerRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const r of routes) r.register(app, ctx);
}
