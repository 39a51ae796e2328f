/**
 * The admin console end to end in a real browser: Debian's Chromium driven by
 * playwright-core against the real service listening on loopback, with fake sources (a GitBook space whose
 * page reads the test can hold, Notion with its OAuth authorization server), a mirrored site to crawl and
 * the real embedding model. It signs in (a wrong key first), connects GitBook through the form, syncs and
 * watches the job's progress to the end, connects Notion through the OAuth consent flow, waits for the
 * indexing progress to finish, searches (semantic and hybrid side by side), retitles, retags, deletes and
 * uploads items, pages the table, starts a crawl with options, reads its refusal reasons and cancels it.
 *
 * Screenshots of every page at desktop (1280×800) and phone (375×812) width go to $KB_TEST_OUTPUT or
 * <tmp>/kb-console-screens (printed), never into the repository.
 *
 * Chromium: `./dev.sh test` installs Debian's package when it is missing; without it this file fails
 * (it does not skip) and says so.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import type { WorkerPool } from '../../src/jobs/worker.ts';
import { basicCredentials, type FakeServer, startFakeServer } from '../fakes/fake-server.ts';
import {
  defaultGitbookPages,
  FakeGitbookSpace,
  GITBOOK_DEFAULT_ITEMS,
  GITBOOK_GOOD_TOKEN,
  GITBOOK_SPACE_ID,
} from '../fakes/gitbook.ts';
import { NOTION_GOOD_TOKEN, startFakeNotion } from '../fakes/notion.ts';
import { FAST_CRAWLER, FAST_WORKERS, FASTAPI_DOCS } from '../http/crawl-helpers.ts';
import { FAST_SOURCE_HTTP } from '../jobs/helpers.ts';
import { launchChromium } from '../support/browser.ts';
import { testEmbedder } from '../support/embedding.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { type ServedSite, serveDirectory } from '../support/sites.ts';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 812 };
const SCREENS = process.env['KB_TEST_OUTPUT']
  ? path.join(process.env['KB_TEST_OUTPUT'], 'console-screens')
  : path.join(tmpdir(), 'kb-console-screens');
const NOTES_CLIENT_ID = 'console-client';
const NOTES_CLIENT_SECRET = 'console-client-secret-0123456789';

/** A fake Notion authorization server: grants consent at once and exchanges the code for the good token. */
async function startFakeNotionAuth(): Promise<FakeServer> {
  const codes = new Set<string>();
  return startFakeServer((req) => {
    if (req.method === 'GET' && req.path === '/v1/oauth/authorize') {
      const redirect = new URL(req.query.get('redirect_uri')!);
      const code = `code-${randomBytes(6).toString('hex')}`;
      codes.add(code);
      redirect.searchParams.set('code', code);
      redirect.searchParams.set('state', req.query.get('state')!);
      return { status: 302, headers: { location: redirect.toString() } };
    }
    if (req.method === 'POST' && req.path === '/v1/oauth/token') {
      const client = basicCredentials(req);
      const { code } = JSON.parse(req.body) as { code: string };
      if (
        client?.user !== NOTES_CLIENT_ID ||
        client.password !== NOTES_CLIENT_SECRET ||
        !codes.delete(code)
      ) {
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid code.' } };
      }
      return {
        status: 200,
        body: {
          access_token: NOTION_GOOD_TOKEN,
          token_type: 'bearer',
          bot_id: 'b3414d65-1224-4ff7-8ffa-c06674a8f8a2',
          workspace_name: 'Acme Docs',
          workspace_id: '9f1b5b4e-4d58-4a3b-9e69-0a3c2d2e7f11',
          owner: { type: 'workspace', workspace: true },
        },
      };
    }
    return { status: 404, body: { error: 'not_found' } };
  });
}

/** Pages added to the fake space's default ones, so a sync lasts long enough to watch. */
const EXTRA_PAGES = 80;
const SYNCED_ITEMS = GITBOOK_DEFAULT_ITEMS + EXTRA_PAGES;

/**
 * The GitBook fake with a slow page read while `slow` is set: with its default pages and 80 more, a sync
 * takes a few seconds, so the sync runner commits batches (at least once a second) while the job runs.
 */
async function startSlowGitbook() {
  const pages = defaultGitbookPages();
  for (let i = 1; i <= EXTRA_PAGES; i++) {
    pages.push({
      id: `pgRelease${String(i).padStart(3, '0')}`,
      title: `Release notes ${i}`,
      markdown: `Release ${i} fixes ${i % 2 === 0 ? 'the exporter' : 'the importer'} and speeds up sync.`,
    });
  }
  const space = new FakeGitbookSpace({ pages });
  const state = { slow: false };
  const server = await startFakeServer(async (req) => {
    if (state.slow && req.path.includes('/page/')) await new Promise((r) => setTimeout(r, 150));
    return space.reply(req);
  });
  return Object.assign(server, { space, state });
}

describe('admin console in Chromium', () => {
  let t: TestApp;
  let pool: WorkerPool;
  let gitbook: Awaited<ReturnType<typeof startSlowGitbook>>;
  let notion: FakeServer;
  let notionAuth: FakeServer;
  let site: ServedSite;
  let browser: Browser;
  let page: Page;
  let base: string;

  /** Screenshots of the current page at both widths; returns to desktop width. */
  const shoot = async (name: string) => {
    await page.screenshot({ path: path.join(SCREENS, `${name}-desktop.png`), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: path.join(SCREENS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize(DESKTOP);
  };

  /** Every form control and button on the page has an accessible name (a label, aria-label or text). */
  const assertLabelled = async () => {
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('input, select, textarea, button')]
        .filter((el) => {
          if (el.getAttribute('aria-label')?.trim() || el.getAttribute('aria-labelledby')) return false;
          const labels = (el as HTMLInputElement).labels;
          if (labels && [...labels].some((l) => l.textContent?.trim())) return false;
          return !(el.tagName === 'BUTTON' && el.textContent?.trim());
        })
        .map((el) => el.outerHTML.slice(0, 120)),
    );
    assert.deepEqual(unnamed, [], 'controls without an accessible name');
  };

  const go = async (label: string) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label }).click();
    await page.getByRole('heading', { level: 1, name: label }).waitFor();
  };

  /** What the page said after an action (success in a status region, errors in an alert). */
  const status = (scope: Page | Locator = page) => scope.getByRole('status');
  const alert = (scope: Page | Locator = page) => scope.getByRole('alert');

  before(async () => {
    mkdirSync(SCREENS, { recursive: true });
    console.log(`console screenshots: ${SCREENS}`);
    [gitbook, notion, notionAuth, site] = await Promise.all([
      startSlowGitbook(),
      startFakeNotion(),
      startFakeNotionAuth(),
      // Slow pages, so the crawl is still running when the test cancels it.
      serveDirectory(FASTAPI_DOCS, { delayMs: 300 }),
    ]);
    t = await startTestApp('pglite', {
      config: {
        KB_CRAWL_ALLOW_PRIVATE: 'true',
        KB_DOCS_SPACE_BASE_URL: gitbook.url,
        KB_NOTES_BASE_URL: notion.url,
        KB_NOTES_OAUTH_BASE_URL: notionAuth.url,
        KB_NOTES_CLIENT_ID: NOTES_CLIENT_ID,
        KB_NOTES_CLIENT_SECRET: NOTES_CLIENT_SECRET,
      },
      parts: { sourceHttp: FAST_SOURCE_HTTP, crawler: FAST_CRAWLER, runIndexer: true },
    });
    await t.service.embedding.use(await testEmbedder());
    pool = t.service.startWorkers({ concurrency: 2, ...FAST_WORKERS });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    // confirm() before deletes and disconnects: the person says yes.
    page.on('dialog', (d) => void d.accept());
  });

  after(async () => {
    await browser?.close();
    await pool?.stop();
    await t?.close();
    // The model's thread ends with the file (an inference still running at exit aborts the process).
    await (await testEmbedder()).close();
    await Promise.all([gitbook?.close(), notion?.close(), notionAuth?.close(), site?.close()]);
  });

  test('sign-in: a wrong key shows the API’s own message; the right one, typed and sent with Enter, signs in', async () => {
    await page.goto(`${base}/console`);
    const key = page.getByLabel('API key');
    await key.waitFor();
    await assertLabelled();
    await key.fill('kb_wrong_not-a-real-key');
    await key.press('Enter');
    const refused = await t.call('GET', '/api/connect/connections', { key: 'kb_wrong_not-a-real-key' });
    assert.equal(refused.status, 401);
    await alert().getByText(refused.body.message, { exact: true }).waitFor();
    await shoot('sign-in');

    await key.fill(t.orgA.key);
    await key.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(
      await page.evaluate(() => sessionStorage.getItem('kb-console-key')),
      t.orgA.key,
      'the key is kept in the tab’s session storage',
    );
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'and nowhere that outlives the tab');
  });

  test('connect GitBook through its form, sync it, and watch the job’s progress to the end', async () => {
    await go('Connections');
    await page.getByLabel('Source', { exact: true }).selectOption('docs_space');
    await assertLabelled();
    // A wrong token first: the API's own refusal, naming the source.
    await page.getByLabel('access_token').fill('gb_wrong_token');
    await page.getByLabel('space_id').fill(GITBOOK_SPACE_ID);
    await page.getByRole('button', { name: 'Connect GitBook' }).click();
    await alert()
      .getByText(/GitBook/)
      .waitFor();
    await page.getByLabel('access_token').fill(GITBOOK_GOOD_TOKEN);
    await page.getByRole('button', { name: 'Connect GitBook' }).click();
    await status().getByText('Connected GitBook.', { exact: false }).waitFor();
    const row = page.locator('tr[data-connection="docs_space"]');
    await row.getByText('Never synced').waitFor();

    gitbook.state.slow = true;
    await row.getByRole('button', { name: 'Sync GitBook (docs_space) now' }).click();
    await status()
      .getByText(/Sync job #\d+ of GitBook/)
      .waitFor();
    await row.getByText('running').waitFor();
    await row.getByRole('link', { name: 'Job history' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sync jobs' }).waitFor();
    const job = page.locator('li.job').first();
    // Live: the page polls while the job runs and shows each committed batch.
    await page.waitForFunction(() => {
      const running = document.querySelector('li.job[data-status="running"]');
      return Number(running?.querySelector('[data-count="seen"]')?.textContent ?? '0') > 0;
    });
    const seenWhileRunning = Number(await job.locator('[data-count="seen"]').textContent());
    assert.ok(seenWhileRunning < SYNCED_ITEMS, `progress shown mid-sync (${seenWhileRunning} seen)`);
    await shoot('sync-jobs-running');
    await page.locator('li.job[data-status="succeeded"]').waitFor({ timeout: 30_000 });
    gitbook.state.slow = false;
    assert.equal(await job.locator('[data-count="seen"]').textContent(), String(SYNCED_ITEMS));
    assert.equal(await job.locator('[data-count="stored"]').textContent(), String(SYNCED_ITEMS));
    assert.equal(await job.locator('[data-count="failed"]').textContent(), '0');
    await assertLabelled();
    await shoot('sync-jobs');
  });

  test('connect Notion through the OAuth consent flow and back to the console', async () => {
    await go('Connections');
    await page.getByLabel('Source', { exact: true }).selectOption('notes');
    await page.getByRole('button', { name: 'Connect with Notion consent (OAuth)' }).click();
    // The consent page (fake) grants at once; the service's callback sends the browser back here.
    await status().getByText('Connected Notion through OAuth consent.').waitFor();
    assert.equal(
      new URL(page.url()).pathname,
      '/console/connections',
      'the consent parameters are cleaned away',
    );
    await page.locator('tr[data-connection="notes"]').waitFor();
    const listed = await t.call('GET', '/api/connect/connections');
    assert.deepEqual(listed.body.data.map((c: { type: string }) => c.type).sort(), ['docs_space', 'notes']);
    await shoot('connections');
  });

  test('the overview shows indexing progress until every item is searchable', async () => {
    await go('Overview');
    await page
      .getByTestId('searchable')
      .getByText(`${SYNCED_ITEMS} of ${SYNCED_ITEMS} items searchable (100%)`)
      .waitFor({ timeout: 60_000 });
    await assertLabelled();
    await shoot('overview');
  });

  test('search shows semantic and hybrid hits side by side, with distances and the query’s terms marked', async () => {
    await go('Search');
    await assertLabelled();
    await page.getByLabel('Query').fill('install the command line tool');
    await page.getByLabel('Query').press('Enter');
    for (const mode of ['semantic', 'hybrid']) {
      const column = page.locator(`section[data-mode="${mode}"]`);
      await column.locator('li.hit').first().waitFor();
      assert.match((await column.locator('.distance').first().textContent()) ?? '', /^distance \d\.\d{3}$/);
    }
    const marked = await page.locator('section[data-mode="hybrid"] mark').allTextContents();
    assert.ok(marked.length > 0, 'query terms are marked in the chunk text');
    assert.ok(
      marked.every((m) => /^(install|the|command|line|tool)/i.test(m) && !/^the$/i.test(m)),
      `only the query's terms are marked: ${marked.join(', ')}`,
    );
    const api = await t.call('POST', '/api/consume/search', {
      body: { query: 'install the command line tool', mode: 'semantic', includeEmbedding: false },
    });
    assert.equal(
      await page.locator('section[data-mode="semantic"] .hit-title').first().textContent(),
      api.body.result[0].title,
      'the first semantic hit is the API’s',
    );
    await shoot('search');
  });

  test('items: page, search, retitle inline, edit tags, delete and upload', async () => {
    await go('Items');
    const total = (await t.call('POST', '/api/connect/knowledgebase-items/query', { body: {} })).body
      .pagination.total_items as number;
    const pages = Math.ceil(total / 20);
    const pager = page.locator('.pager-status');
    await pager.getByText(`Page 1 of ${pages} · ${total} items`).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await pager.getByText(`Page 2 of ${pages} · ${total} items`).waitFor();
    assert.equal(await page.locator('table.items tbody tr').count(), 20);
    await page.getByLabel('Per page').selectOption('100');
    await pager.getByText(`Page 1 of ${Math.ceil(total / 100)} · ${total} items`).waitFor();
    await assertLabelled();

    await page.getByLabel('Search titles and content').fill('Installation');
    await page.getByLabel('Search titles and content').press('Enter');
    const row = page.locator('table.items tbody tr', {
      has: page.getByRole('rowheader', { name: 'Installation', exact: true }),
    });
    await row.waitFor();
    const itemId = (await row.getAttribute('data-item'))!;

    await row.getByRole('button', { name: 'Rename “Installation”' }).click();
    const title = page.getByLabel('New title for “Installation”');
    await title.fill('Setting up the CLI');
    await title.press('Enter');
    await status().getByText('Renamed to “Setting up the CLI”.').waitFor();
    await page.getByRole('link', { name: 'Setting up the CLI' }).waitFor();

    const renamed = page.locator(`tr[data-item="${itemId}"]`);
    await renamed.getByRole('button', { name: 'Edit the tags of “Setting up the CLI”' }).click();
    const tags = page.getByLabel('Tags of “Setting up the CLI”, comma-separated');
    await tags.fill('setup, cli');
    await tags.press('Enter');
    await status().getByText('Tags of “Setting up the CLI” saved.').waitFor();
    const stored = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      body: { search: 'Setting up the CLI' },
    });
    assert.deepEqual(
      stored.body.items.map((i: { id: string; title: string; tags: string[] }) => [i.id, i.title, i.tags]),
      [[itemId, 'Setting up the CLI', ['setup', 'cli']]],
    );

    // Escape leaves an edit without saving.
    await renamed.getByRole('button', { name: 'Rename “Setting up the CLI”' }).click();
    await page.getByLabel('New title for “Setting up the CLI”').fill('Not saved');
    await page.getByLabel('New title for “Setting up the CLI”').press('Escape');
    await page.getByRole('link', { name: 'Setting up the CLI' }).waitFor();

    await page.getByLabel('Search titles and content').fill('Release notes 80');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await pager.getByText('Page 1 of 1 · 1 item').waitFor();
    await page.getByRole('button', { name: 'Delete “Release notes 80”' }).click();
    await status().getByText('Deleted 1 item.').waitFor();
    await page.getByText('No item matches “Release notes 80”.').waitFor();
    const gone = await t.call('POST', '/api/connect/knowledgebase-items/query', {
      body: { search: 'Release notes 80' },
    });
    assert.deepEqual(gone.body.items, []);

    await page.getByLabel('Title', { exact: true }).fill('Console upload');
    await page
      .getByLabel('Content (markdown or plain text)')
      .fill('# Console upload\n\nUploaded from the console.');
    await page.getByLabel('Tags (comma-separated)').fill('console');
    await page.getByRole('button', { name: 'Upload' }).click();
    await status().getByText('Uploaded “Console upload”; it is searchable once indexed.').waitFor();
    await page.getByLabel('Search titles and content').fill('');
    await page.getByLabel('Search titles and content').press('Enter');
    await page.locator('table.items tbody tr').first().getByText('Console upload').waitFor();
    await page.getByLabel('Per page').selectOption('20');
    await page
      .locator('table.items[data-items-page="1"][aria-busy="false"] tbody tr:nth-child(20)')
      .waitFor();
    await shoot('items');
  });

  test('crawls: the API’s refusal of a bad pattern, then a crawl with options, its refusals, and cancel', async () => {
    await go('Crawls');
    await assertLabelled();
    const url = `${site.origin}/`;
    await page.getByLabel('Start URL').fill(url);
    await page.getByLabel('Exclude paths (one regular expression per line)').fill('(?<=x)y');
    await page.getByRole('button', { name: 'Start crawl' }).click();
    const bad = await t.call('POST', '/api/connect/crawling/', { body: { url, excludePaths: ['(?<=x)y'] } });
    assert.equal(bad.status, 400);
    await alert().getByText(bad.body.message, { exact: true }).waitFor();

    await page.getByLabel('Page limit').fill('60');
    await page.getByLabel('Exclude paths (one regular expression per line)').fill('^/tutorial/');
    await page.getByLabel('Tags (comma-separated)').fill('fastapi, docs');
    await page.getByRole('button', { name: 'Start crawl' }).click();
    await status().getByText(`Crawl of ${url} started.`).waitFor();
    const card = page.locator('li.job').first();
    await card
      .locator('.refused summary')
      .getByText(/excluded \d+/)
      .waitFor({ timeout: 20_000 });
    await page.waitForFunction(() => {
      const text = document.querySelector('li.job .progress-text')?.textContent ?? '';
      return /^[1-9]/.test(text);
    });
    assert.equal(await card.getAttribute('data-status'), 'scraping', 'still crawling when cancelled');
    await card.locator('.refused summary').click();
    await shoot('crawls');
    await card.getByRole('button', { name: `Cancel the crawl of ${url}` }).click();
    await status(card).getByText(`Crawl of ${url} cancelled.`).waitFor();
    await page.locator('li.job[data-status="cancelled"]').waitFor();
    const jobs = await t.call('GET', '/api/connect/crawling/');
    assert.equal(jobs.body.data[0].status, 'cancelled');
    assert.deepEqual(jobs.body.data[0].tags, ['fastapi', 'docs']);
  });

  test('deep links answer the app, and the shell allows only its own origin', async () => {
    const res = await page.goto(`${base}/console/items`);
    assert.equal(res?.status(), 200);
    await page.getByRole('heading', { level: 1, name: 'Items' }).waitFor();
    const csp = res?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  });
});
