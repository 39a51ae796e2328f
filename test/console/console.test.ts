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

/** Polls `check` until it holds; a hang guard, not a timing. */
async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; !(await check()); i++) {
    if (i > 600) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
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
    // A button named by aria-label says its visible text too (so "click Full re-sync" works by voice).
    const misnamed = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('button[aria-label]')]
        .filter((el) => {
          const words = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();
          return !words(el.getAttribute('aria-label')!).includes(words(el.textContent ?? ''));
        })
        .map((el) => `${el.textContent?.trim()} → ${el.getAttribute('aria-label')}`),
    );
    assert.deepEqual(misnamed, [], 'buttons whose accessible name leaves out their visible text');
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

  test('connect GitBook through its form; its first sync starts at once and the job’s progress shows to the end', async () => {
    await go('Connections');
    await page.getByLabel('Source', { exact: true }).selectOption('docs_space');
    await assertLabelled();
    // Fields by their human names, not the API's (`access_token`).
    const fieldLabels = await page.locator('form label').allTextContents();
    assert.ok(
      fieldLabels.includes('Access token') && fieldLabels.includes('Space ID'),
      fieldLabels.join(' | '),
    );
    assert.deepEqual(
      fieldLabels.filter((l) => l.includes('_')),
      [],
      'no field is labelled by its API name',
    );
    // A wrong token first: the API's own refusal, naming the source.
    await page.getByLabel('Access token').fill('gb_wrong_token');
    await page.getByLabel('Space ID').fill(GITBOOK_SPACE_ID);
    await page.getByRole('button', { name: 'Connect GitBook' }).click();
    await alert()
      .getByText(/GitBook/)
      .waitFor();
    gitbook.state.slow = true;
    await page.getByLabel('Access token').fill(GITBOOK_GOOD_TOKEN);
    await page.getByRole('button', { name: 'Connect GitBook' }).click();
    // No run-sync needed: the connection's first sync started with it.
    await status()
      .getByText(/^Connected GitBook\. Its first sync \(job #\d+\) started\.$/)
      .waitFor();
    const row = page.locator('tr[data-connection="docs_space"]');
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
    await status()
      .getByText(/^Connected Notion through OAuth consent\. Its first sync \(job #\d+\) started\.$/)
      .waitFor();
    assert.equal(
      new URL(page.url()).pathname,
      '/console/connections',
      'the consent parameters are cleaned away',
    );
    await page.locator('tr[data-connection="notes"]').waitFor();
    const listed = await t.call('GET', '/api/connect/connections');
    assert.deepEqual(listed.body.data.map((c: { type: string }) => c.type).sort(), ['docs_space', 'notes']);
    // Every row's buttons say their visible text in their accessible names.
    await assertLabelled();
    await shoot('connections');
  });

  test('OAuth is offered only where the service has it set up; elsewhere the button says why not', async () => {
    await go('Connections');
    await page.getByLabel('Source', { exact: true }).selectOption('support_desk');
    const oauth = page.getByRole('button', { name: 'Connect with Zendesk consent (OAuth)' });
    assert.equal(await oauth.isDisabled(), true, 'Zendesk OAuth is not configured on this service');
    const reasonId = await oauth.getAttribute('aria-describedby');
    assert.ok(reasonId, 'the disabled button points at its reason');
    assert.match(
      (await page.locator(`#${reasonId}`).textContent()) ?? '',
      /OAuth for Zendesk is not configured on this service/,
    );
    assert.ok(await page.getByLabel('API token (optional)').isVisible());
    await page.getByLabel('Source', { exact: true }).selectOption('notes');
    const notes = page.getByRole('button', { name: 'Connect with Notion consent (OAuth)' });
    assert.equal(await notes.isDisabled(), false, 'Notion OAuth is configured');
    assert.equal(await notes.getAttribute('aria-describedby'), null);
  });

  test('the overview shows indexing progress until every item is searchable', async () => {
    await go('Overview');
    await page
      .getByTestId('searchable')
      .getByText(`${SYNCED_ITEMS} of ${SYNCED_ITEMS} items searchable (100%)`)
      .waitFor({ timeout: 60_000 });
    // Connections by product and type, as the connections page names them, not by internal type alone.
    const byConnection = page.locator('table', {
      has: page.locator('caption', { hasText: 'By connection' }),
    });
    await byConnection.getByRole('rowheader', { name: 'GitBook (docs_space)', exact: true }).waitFor();
    assert.deepEqual(
      (await byConnection.getByRole('rowheader').allTextContents()).filter((n) => !n.includes('(')),
      [],
      'every connection is shown by its product name',
    );
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
    // Chunks are markdown: shown rendered in both columns (bold, code), never as raw syntax.
    for (const mode of ['semantic', 'hybrid']) {
      const chunks = await page.locator(`section[data-mode="${mode}"] .chunk`).allTextContents();
      const raw = chunks.filter((c) => /\*\*|```|^#{1,6} /m.test(c));
      assert.deepEqual(raw, [], `${mode} hits show markdown syntax`);
    }
    const installation = page.locator('section[data-mode="hybrid"] li.hit', {
      has: page.locator('.hit-title', { hasText: /^Installation$/ }),
    });
    assert.equal(await installation.locator('.chunk strong').first().textContent(), 'Acme CLI');
    await shoot('search');
  });

  test('search renders a chunk’s markdown without letting its HTML in', async () => {
    const probe = [
      '# Penguin probe',
      '',
      'Penguins <img src="x" onerror="document.title=\'injected\'"> waddle **quickly** over the ice.',
      '',
      '<script>document.title = "injected"</script>',
      '',
      '- [a link](javascript:document.title=1) and `code`',
    ].join('\n');
    const up = await t.call('POST', '/api/connect/knowledgebase-items', {
      body: { title: 'Penguin probe', content: probe },
    });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    await waitUntil(async () => {
      const stats = await t.call('GET', '/api/connect/knowledgebase-items/stats');
      return stats.body.byIndexingStatus.pending === 0;
    }, 'the probe to be indexed');
    await go('Search');
    await page.getByLabel('Query').fill('penguins waddle over the ice');
    await page.getByLabel('Query').press('Enter');
    const hit = page.locator('section[data-mode="hybrid"] li.hit', {
      has: page.locator('.hit-title', { hasText: /^Penguin probe$/ }),
    });
    await hit.waitFor();
    const chunk = hit.locator('.chunk');
    assert.equal(await chunk.locator('strong').textContent(), 'quickly');
    assert.equal(await chunk.locator('li code').textContent(), 'code');
    assert.equal(
      await chunk.locator('img, script, [onerror]').count(),
      0,
      'no element from the chunk’s HTML',
    );
    assert.equal(await chunk.locator('a').count(), 0, 'a javascript: link is text, not a link');
    assert.match((await chunk.textContent()) ?? '', /a link/);
    assert.notEqual(await page.title(), 'injected');
    const gone = await t.call('DELETE', '/api/connect/knowledgebase-items', {
      body: { ids: [up.body.item.id] },
    });
    assert.equal(gone.status, 200, JSON.stringify(gone.body));
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

  test('crawls: the API’s refusal of a bad pattern and of a pace, then a crawl with options, its refusals, and cancel', async () => {
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
    // A pace beyond the operator's bounds: the API's refusal, shown as the form shows others.
    await page.getByLabel('Delay between requests, ms (optional)').fill('1');
    await page.getByRole('button', { name: 'Start crawl' }).click();
    const tooFast = await t.call('POST', '/api/connect/crawling/', { body: { url, delayMs: 1 } });
    assert.equal(tooFast.status, 400);
    await alert().getByText(tooFast.body.message, { exact: true }).waitFor();
    await page.getByLabel('Delay between requests, ms (optional)').fill('100');
    await page.getByLabel('Max concurrency per host (optional)').fill('2');
    await page.getByLabel(/^Render JavaScript/).check();
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
    const { renderJavaScript, maxConcurrency, delayMs } = jobs.body.data[0];
    assert.deepEqual(
      { renderJavaScript, maxConcurrency, delayMs },
      { renderJavaScript: true, maxConcurrency: 2, delayMs: 100 },
    );
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

describe('job warnings in the console (Chromium)', () => {
  let t: TestApp;
  let pool: WorkerPool;
  let site: ServedSite;
  let shopify: FakeServer;
  let browser: Browser;

  before(async () => {
    // Imported here so this block leaves the file's imports as they are.
    const { serveRoutes } = await import('../support/sites.ts');
    const shop = await import('../fakes/shopify.ts');
    const store = new shop.FakeShopifyStore();
    store.setPolicy('REFUND_POLICY', '<p>You have 30 days to request a return.</p>');
    store.deny('shopPolicies', 'read_legal_policies');
    [site, shopify] = await Promise.all([
      serveRoutes({
        '/robots.txt': (_req, res, { origin }) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`User-agent: *\nSitemap: ${origin}/broken-sitemap.xml\n`);
        },
        '/broken-sitemap.xml': { status: 500, body: 'oops' },
        '/': {
          body: '<html><head><title>Home</title></head><body><p>Hello from the warnings site.</p></body></html>',
        },
      }),
      shop.startFakeShopify({ store }),
    ]);
    t = await startTestApp('pglite', {
      config: { KB_CRAWL_ALLOW_PRIVATE: 'true', KB_STOREFRONT_BASE_URL: shopify.url },
      parts: { sourceHttp: FAST_SOURCE_HTTP, crawler: FAST_CRAWLER },
    });
    pool = t.service.startWorkers({ concurrency: 2, ...FAST_WORKERS });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await pool?.stop();
    await t?.close();
    await Promise.all([site?.close(), shopify?.close()]);
  });

  test('the crawl and sync-job pages show each job’s warnings', async () => {
    const crawl = await t.call('POST', '/api/connect/crawling/', { body: { url: `${site.origin}/` } });
    assert.equal(crawl.status, 200, JSON.stringify(crawl.body));
    const created = await t.call('POST', '/api/connect/connection', {
      body: {
        source: {
          type: 'shopify',
          shop: 'acme-outdoor',
          access_token: 'shpat_fake_good_token_0123456789abcdef',
        },
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    if (created.body.jobId === undefined) {
      const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'storefront' } });
      assert.equal(run.status, 200, JSON.stringify(run.body));
    }
    await waitUntil(async () => {
      const c = await t.call('GET', `/api/connect/crawling/${crawl.body.id}`);
      const s = await t.call('GET', '/api/connect/connection-sync-jobs?type=storefront');
      return c.body.status === 'completed' && s.body.data[0]?.status === 'incomplete';
    }, 'the crawl and the sync to end');

    const address = t.app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const page = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    await page.goto(`${base}/console/crawls`);
    await page.getByLabel('API key').fill(t.orgA.key);
    await page.getByLabel('API key').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Crawls' }).waitFor();
    const crawlWarning = page.locator(
      `li.job[data-crawl="${crawl.body.id}"] [data-warning="sitemap_unreadable"]`,
    );
    await crawlWarning
      .getByText(`${site.origin}/broken-sitemap.xml could not be read`, { exact: false })
      .waitFor();

    await page.goto(`${base}/console/sync-jobs?connection=${encodeURIComponent(created.body.connectionId)}`);
    await page
      .locator('[data-warning="permission_missing"]')
      .getByText('read_legal_policies', { exact: false })
      .waitFor();
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: path.join(SCREENS, 'sync-job-warnings-phone.png'), fullPage: true });
  });
});
