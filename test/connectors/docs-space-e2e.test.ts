/** `docs_space` (GitBook) through the HTTP API and the job engine, in both storage modes. */
import {
  GITBOOK_DEFAULT_ITEMS,
  GITBOOK_GOOD_TOKEN,
  GITBOOK_SPACE_ID,
  startFakeGitbook,
} from '../fakes/gitbook.ts';
import { describeSourceEndToEnd } from './source-e2e.ts';

describeSourceEndToEnd({
  name: 'docs_space (GitBook)',
  baseUrlSetting: 'KB_DOCS_SPACE_BASE_URL',
  startFake: () => startFakeGitbook(),
  source: () => ({ type: 'docs_space', access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID }),
  itemCount: GITBOOK_DEFAULT_ITEMS,
  expected: [
    {
      title: 'Installation',
      source_url: 'https://docs.acme.com/getting-started/installation',
      source_table_name: 'docs_space_pages',
      visibility: 'public',
      tags: ['docs_space', 'Product Docs', 'Getting started'],
    },
    {
      // A hidden page (out of the navigation, still published) is an item.
      title: 'Deploying to production',
      source_url: 'https://docs.acme.com/guides/deploying-to-production',
      source_table_name: 'docs_space_pages',
      visibility: 'public',
      tags: ['docs_space', 'Product Docs', 'Guides'],
    },
  ],
  search: { query: 'blue-green deployment: how fast is a rollback?', topTitle: 'Deploying to production' },
});
