/** `wiki` (Confluence Cloud) through the HTTP API and the job engine, in both storage modes. */
import { CONFLUENCE_GOOD, FakeConfluenceSite, startFakeConfluence } from '../fakes/confluence.ts';
import { describeSourceEndToEnd } from './source-e2e.ts';

const para = (text: string) => `<p>${text}</p>`;

/** Twenty current pages and blog posts about distinct topics, and content that must not sync. */
function site(): FakeConfluenceSite {
  const s = new FakeConfluenceSite();
  s.addSpace('ENG', 'Engineering');
  s.addSpace('OPS', 'Operations');
  s.addSpace('OLD', 'Legacy');
  s.addPage({
    space: 'ENG',
    title: 'Engineering Home',
    storage: para('Start here for engineering documentation.'),
  });
  const pages: Array<[string, string, string]> = [
    [
      'ENG',
      'Code review checklist',
      'Every pull request needs one approving review and green continuous integration.',
    ],
    [
      'ENG',
      'Local development setup',
      'Install Node 24 and Docker, then run the bootstrap script to seed the database.',
    ],
    [
      'ENG',
      'API style guide',
      'Endpoints use plural nouns, cursor pagination and an errors array in every failure.',
    ],
    [
      'ENG',
      'Frontend architecture',
      'The web client is a React single page application with server-side rendering.',
    ],
    [
      'ENG',
      'Feature flags',
      'Flags are created in the flag service and removed within two sprints of full rollout.',
    ],
    [
      'ENG',
      'Testing strategy',
      'Unit tests run on every commit; integration tests run against a real Postgres.',
    ],
    ['ENG', 'Release train', 'A release branch is cut every Tuesday and shipped to production on Thursday.'],
    [
      'ENG',
      'Dependency upgrades',
      'Renovate opens weekly pull requests; security patches are merged within a day.',
    ],
    ['OPS', 'Operations Home', 'Runbooks, on-call schedules and incident reviews of the operations team.'],
    [
      'OPS',
      'Incident response',
      'Declare an incident in the chat channel, page the commander, and start a timeline.',
    ],
    [
      'OPS',
      'On-call handbook',
      'The primary on-call engineer acknowledges pages within five minutes, day or night.',
    ],
    [
      'OPS',
      'Backup key rotation',
      'The database backup encryption keys are rotated every ninety days by the security on-call engineer with the vault rotate command; the old key stays readable for thirty days.',
    ],
    [
      'OPS',
      'Capacity planning',
      'Cluster capacity is reviewed monthly against the traffic forecast and CPU headroom.',
    ],
    ['OPS', 'Log retention', 'Application logs are kept for fourteen days, audit logs for seven years.'],
    ['OPS', 'DNS changes', 'DNS records are managed as code and changed through a reviewed pull request.'],
  ];
  for (const [space, title, text] of pages) {
    s.addPage({
      space,
      title,
      storage: `<h2>${title}</h2>${para(text)}<ac:structured-macro ac:name="info"><ac:rich-text-body>${para(`Owner: the ${space === 'ENG' ? 'platform' : 'operations'} team.`)}</ac:rich-text-body></ac:structured-macro>`,
    });
  }
  s.addBlogPost({
    space: 'ENG',
    title: 'Launch week recap',
    storage: para('Five features shipped during launch week.'),
  });
  s.addBlogPost({
    space: 'ENG',
    title: 'Hack day results',
    storage: para('The winning hack day team built a query profiler.'),
  });
  s.addBlogPost({
    space: 'OPS',
    title: 'Quarterly uptime report',
    storage: para('Uptime last quarter was four nines.'),
  });
  s.addBlogPost({
    space: 'OPS',
    title: 'New pager tool',
    storage: para('We moved paging to a new tool in March.'),
  });
  // Not items: trashed, archived, draft, in an archived space.
  s.addPage({ space: 'ENG', title: 'Trashed notes', status: 'trashed' });
  s.addPage({ space: 'ENG', title: 'Archived notes', status: 'archived' });
  s.addPage({ space: 'ENG', title: 'Draft notes', status: 'draft' });
  s.addPage({ space: 'OLD', title: 'Legacy Home', storage: para('Old documentation.') });
  s.archiveSpace('OLD');
  return s;
}

const fixture = site();
const rotation = [...fixture.contents.values()].find((c) => c.title === 'Backup key rotation')!;
const uptime = [...fixture.contents.values()].find((c) => c.title === 'Quarterly uptime report')!;

describeSourceEndToEnd({
  name: 'wiki (Confluence)',
  baseUrlSetting: 'KB_WIKI_BASE_URL',
  // Each storage mode gets its own copy (same ids: the site is built the same way).
  startFake: () => startFakeConfluence({ site: site() }),
  source: () => ({ type: 'wiki', domain_name: 'acme', ...CONFLUENCE_GOOD }),
  itemCount: 20,
  expected: [
    {
      title: 'Backup key rotation',
      source_url: `https://acme.atlassian.net/wiki/spaces/OPS/pages/${rotation.id}/Backup+key+rotation`,
      source_table_name: 'wiki_pages',
      visibility: 'private',
      tags: ['wiki', 'OPS', 'Operations', 'Operations Home'],
    },
    {
      title: 'Quarterly uptime report',
      source_url: fixture.url(uptime),
      source_table_name: 'wiki_blogposts',
      visibility: 'private',
      tags: ['wiki', 'OPS', 'Operations'],
    },
  ],
  search: { query: 'how often are the backup encryption keys rotated?', topTitle: 'Backup key rotation' },
});
