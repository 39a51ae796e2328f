/**
 * notes (Notion) end to end through the API and the job engine, in both storage modes, against the fake
 * Notion workspace (pages search lists and pages only the walk finds, a page inside a column, a database
 * of services with rows).
 */
import { NOTION_GOOD_TOKEN, sampleWorkspace, startFakeNotion } from '../fakes/notion.ts';
import { describeSourceEndToEnd } from './source-e2e.ts';

const { workspace, ids } = sampleWorkspace();

describeSourceEndToEnd({
  name: 'notes (Notion)',
  baseUrlSetting: 'KB_NOTES_BASE_URL',
  // Both storage modes read the same workspace; nothing here changes it.
  startFake: () => startFakeNotion({ workspace }),
  source: () => ({ type: 'notion', access_token: NOTION_GOOD_TOKEN }),
  itemCount: 10,
  expected: [
    {
      title: 'Engineering handbook',
      source_url: workspace.urlOf(ids.handbook),
      source_table_name: 'notes_pages',
      visibility: 'private',
      tags: ['notes'],
    },
    {
      title: 'Runbook',
      source_url: workspace.urlOf(ids.runbook),
      source_table_name: 'notes_pages',
      visibility: 'private',
      tags: ['notes', 'Deep dive'],
    },
    {
      title: 'Billing',
      source_url: workspace.urlOf(ids.billingRow),
      source_table_name: 'notes_database_rows',
      visibility: 'private',
      tags: ['notes', 'Services'],
    },
    {
      title: 'Gateway',
      source_url: workspace.urlOf(ids.gatewayRow),
      source_table_name: 'notes_database_rows',
      visibility: 'private',
      tags: ['notes', 'Services'],
    },
  ],
  search: { query: 'which service reconciles invoices every night?', topTitle: 'Billing' },
});
