/**
 * Near-duplicates collapse: the fingerprint's threshold on both sides (a word changed
 * collapses, a paragraph added or replaced does not); then crawls of a purpose-made site in both storage
 * modes: near-duplicate variants are counted under `near_duplicate` with the URL they duplicate and the
 * kept item's `variants:N` tag says how many, rel=canonical and robots noindex are honoured, a re-crawl
 * that meets a variant first keeps the one item it had, and a crawl that resumes after its worker died
 * still finds the page stored before the death (the fingerprints are in the database).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import {
  NEAR_DUPLICATE_SIMILARITY,
  signatureBands,
  signatureSimilarity,
  textSignature,
} from '../../src/crawler/fingerprint.ts';
import { runCrawlJob } from '../../src/crawler/run.ts';
import type { CrawlJobView } from '../../src/db/repositories/crawl-jobs.ts';
import { claimJob } from '../../src/jobs/queue.ts';
import { benchText } from '../fakes/workspace.ts';
import { type CrawlTestApp, claimedRunDeps, startCrawlApp } from '../http/crawl-helpers.ts';
import { STORAGE_MODES } from '../support/harness.ts';
import { type RouteHandler, type ServedRoutes, serveRoutes } from '../support/sites.ts';

const VOCABULARY =
  'harbour lantern copper meadow falcon quartz willow ember glacier thistle orchard basalt heron saffron tundra marble cobalt juniper lagoon cedar prairie walnut canyon river signal ledger beacon compass anchor timber'.split(
    ' ',
  );

/** `sentences` sentences of 12 words of deterministic prose, drawn for document `doc`. */
function prose(doc: number, sentences: number): string {
  return benchText(VOCABULARY, doc, 7).paragraph(sentences);
}

const similarity = (a: string, b: string) => signatureSimilarity(textSignature(a)!, textSignature(b)!);

describe('near-duplicate fingerprints', () => {
  // 156 words: 13 sentences of 12.
  const page = `${prose(1, 6)}\n\n${prose(2, 7)}`;
  const words = page.split(' ');

  test('a page with one word changed is a near-duplicate; with a paragraph added or replaced it is not', () => {
    const oneWord = [...words.slice(0, 70), 'lighthouse', ...words.slice(71)].join(' ');
    assert.ok(similarity(page, oneWord) >= NEAR_DUPLICATE_SIMILARITY, `${similarity(page, oneWord)}`);
    const twoWords = `${page}\n\nSelected colour: blue.`;
    assert.ok(similarity(page, twoWords) >= NEAR_DUPLICATE_SIMILARITY, `${similarity(page, twoWords)}`);

    // A paragraph of 48 words (4 sentences) of its own: content, kept.
    const added = `${page}\n\n${prose(3, 4)}`;
    assert.ok(similarity(page, added) < NEAR_DUPLICATE_SIMILARITY, `${similarity(page, added)}`);
    const replaced = `${prose(1, 6)}\n\n${prose(4, 4)}${prose(2, 7).slice(prose(2, 4).length)}`;
    assert.ok(similarity(page, replaced) < NEAR_DUPLICATE_SIMILARITY, `${similarity(page, replaced)}`);
    assert.ok(similarity(page, prose(5, 13)) < 0.3, 'unrelated prose');
  });

  test('markup and link targets do not count; identical text is similarity 1', () => {
    const linked = page.replace(words[10]!, `[${words[10]}](https://example.com/a/very/long/path?x=1)`);
    assert.equal(similarity(page, linked), 1);
    assert.equal(similarity(page, page.toUpperCase()), 1);
    assert.equal(textSignature('  \n# \n'), null);
  });

  test('texts too short for one changed word to matter get no signature and are never compared', () => {
    // Words without digits: a number is one word to the fingerprint.
    const words = (n: number) =>
      Array.from(
        { length: n },
        (_, i) => `w${i.toString(26).replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)]!)}`,
      ).join(' ');
    // 37 distinct word pairs: one word changed would already leave 35 of 39 (0.897), under the threshold.
    assert.equal(textSignature(words(38)), null);
    assert.ok(textSignature(words(39)), '38 word pairs: fingerprinted');
    // A short page and another saying the same few words in other markup: kept apart (the text hash
    // still finds truly identical pages).
    assert.equal(textSignature('# Search\n\nSearching for multiple words only shows matches.'), null);
    assert.equal(textSignature('# Index\n\n[Search](/search.html) for multiple words.'), null);
  });

  test('bands are shared by near-duplicates of one salt only', () => {
    const sig = textSignature(page)!;
    const near = textSignature(`${page} blue`)!;
    const shared = (a: number[], b: number[]) => a.filter((x) => b.includes(x)).length;
    assert.ok(shared(signatureBands(sig, 'org-a\nhost'), signatureBands(near, 'org-a\nhost')) > 0);
    assert.equal(shared(signatureBands(sig, 'org-a\nhost'), signatureBands(sig, 'org-b\nhost')), 0);
  });
});

/** A page: navigation and footer around a main article. */
function html(title: string, text: string, opts: { links?: string[]; head?: string } = {}): RouteHandler {
  const nav = (opts.links ?? []).map((l) => `<a href="${l.replace(/&/g, '&amp;')}">${l}</a>`).join(' ');
  const paragraphs = text
    .split('\n\n')
    .map((p) => `<p>${p}</p>`)
    .join('');
  return {
    body: `<!doctype html><html><head><title>${title}</title>${opts.head ?? ''}</head><body><nav>${nav}</nav><main><h1>${title}</h1>${paragraphs}</main><footer>Footer ${title}</footer></body></html>`,
  };
}

const GUIDE = `${prose(10, 6)}\n\n${prose(11, 7)}`;
const PRODUCT = `${prose(20, 6)}\n\n${prose(21, 6)}`;

function siteRoutes(gate?: Promise<void>): Record<string, RouteHandler> {
  const send = (res: ServerResponse, route: RouteHandler) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end((route as { body: string }).body);
  };
  return {
    '/': html('Home', prose(30, 5), {
      links: [
        '/guide',
        '/guide?edition=print',
        '/guide?edition=pocket',
        '/guide-extended',
        '/product?color=red',
        '/product',
        '/external-canonical',
        '/private-notes',
        '/about',
      ],
    }),
    // The guide, and editions of it with a word or two changed: near-duplicates.
    '/guide': async (_req, res, ctx) => {
      const edition = ctx.url.searchParams.get('edition');
      if (edition === 'pocket' && gate) await gate;
      send(res, html('Trail Guide', edition ? `${GUIDE}\n\nEdition: ${edition}.` : GUIDE, { links: ['/'] }));
    },
    // The guide with a paragraph of its own: kept.
    '/guide-extended': html('Trail Guide', `${GUIDE}\n\n${prose(12, 4)}`),
    // A variant naming its product page as canonical: stored there, not here.
    '/product': (_req, res, ctx) =>
      send(
        res,
        ctx.url.searchParams.get('color') === 'red'
          ? html('Lantern, red', prose(40, 8), { head: '<link rel="canonical" href="/product">' })
          : html('Lantern', PRODUCT),
      ),
    // Canonical on another site (not crawled): the page stays a page of its own.
    '/external-canonical': html('Mirror', prose(50, 8), {
      head: '<link rel="canonical" href="https://elsewhere.example/original">',
    }),
    '/private-notes': html('Notes', prose(60, 8), { head: '<meta name="robots" content="noindex, follow">' }),
    '/about': html('About', prose(70, 8)),
  };
}

/** Pages with content of their own: home, guide, extended guide, product, external-canonical, about. */
const DISTINCT = 6;

for (const mode of STORAGE_MODES) {
  describe(`near-duplicates in a crawl (${mode})`, () => {
    let h: CrawlTestApp;
    const sites: ServedRoutes[] = [];
    before(async () => {
      h = await startCrawlApp(mode, { workers: false, crawler: { pageConcurrency: 2 } });
    });
    after(async () => {
      await h?.close();
      for (const s of sites) await s.close();
    });

    const storedPaths = async (job: CrawlJobView) =>
      (
        await h.t.db.query<{ url: string }>(
          `SELECT url FROM crawl_frontier WHERE crawl_job_id = $1 AND outcome IN ('created', 'updated', 'unchanged')`,
          [job.id],
        )
      )
        .map((r) => new URL(r.url).pathname + new URL(r.url).search)
        .sort();

    test('variants collapse into the page they repeat, with its URL; canonical and noindex are honoured; a re-crawl meeting a variant first keeps one item', async () => {
      const site = await serveRoutes(siteRoutes());
      sites.push(site);
      h.startWorkers();
      try {
        const first = await h.waitDone(
          (await h.crawl({ url: `${site.origin}/`, limit: 20, tags: ['kb'] })).id,
        );
        assert.equal(first.status, 'completed', JSON.stringify(first));
        assert.deepEqual(await storedPaths(first), [
          '/',
          '/about',
          '/external-canonical',
          '/guide',
          '/guide-extended',
          '/product',
        ]);
        assert.equal(first.completed_pages, DISTINCT);
        assert.equal(first.total_pages, DISTINCT);
        assert.equal(first.outcomes['near_duplicate'], 2, JSON.stringify(first.outcomes));
        const near = first.refused['near_duplicate']!;
        assert.equal(near.count, 2);
        for (const url of near.sample) {
          assert.match(url, /\/guide\?edition=/);
          assert.equal(near.of?.[url], `${site.origin}/guide`, 'the URL it duplicates');
        }
        assert.deepEqual(first.refused['canonical']?.sample, [`${site.origin}/product?color=red`]);
        assert.equal(
          first.refused['canonical']?.of?.[`${site.origin}/product?color=red`],
          `${site.origin}/product`,
        );
        assert.deepEqual(first.refused['noindex']?.sample, [`${site.origin}/private-notes`]);

        const items = await h.crawledItems();
        assert.equal(items.length, DISTINCT);
        const guide = items.find((i) => i.source_url === `${site.origin}/guide`)!;
        assert.deepEqual(
          guide.tags,
          ['kb', 'variants:2'],
          'the kept item says how many variants it stands for',
        );
        const about = items.find((i) => i.source_url === `${site.origin}/about`)!;
        assert.deepEqual(about.tags, ['kb']);
        const [detail] = await h.t.db.query<{ detail: string }>(
          `SELECT detail FROM crawl_frontier WHERE crawl_job_id = $1 AND url = $2`,
          [first.id, `${site.origin}/guide?edition=print`],
        );
        assert.match(detail!.detail, /^near-duplicate of \S+\/guide \(similarity (0\.9\d|1\.00)\)$/);

        // A re-crawl starting at a variant meets it before the guide: it collapses into the guide's item.
        const second = await h.waitDone(
          (await h.crawl({ url: `${site.origin}/guide?edition=print`, limit: 20, tags: ['kb'] })).id,
        );
        assert.equal(second.status, 'completed', JSON.stringify(second));
        assert.equal(
          second.refused['near_duplicate']?.of?.[`${site.origin}/guide?edition=print`],
          `${site.origin}/guide`,
        );
        const again = await h.crawledItems();
        assert.deepEqual(
          again.map((i) => i.source_url).sort(),
          items.map((i) => i.source_url).sort(),
          'the same items, none twice',
        );
        assert.deepEqual(again.find((i) => i.source_url === `${site.origin}/guide`)!.tags, [
          'kb',
          'variants:2',
        ]);
      } finally {
        await h.pool?.stop();
        h.pool = null;
      }
    });

    test('a crawl resumed after its worker died collapses a variant into the page stored before the death', async () => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const site = await serveRoutes(siteRoutes(gate));
      sites.push(site);
      const job = await h.crawl({ url: `${site.origin}/`, limit: 20 });
      const claimed = (await claimJob(h.t.db, { kinds: ['crawl'], workerId: 'doomed' }))!;
      const death = new AbortController();
      const running = runCrawlJob(claimedRunDeps(h.t, claimed), job.id, death.signal);
      // The guide is stored while the pocket edition is held at the site.
      const deadline = Date.now() + 20_000;
      for (;;) {
        assert.ok(Date.now() < deadline, 'the guide was stored and the pocket edition requested');
        const rows = await h.t.db.query<{ outcome: string | null }>(
          `SELECT outcome FROM crawl_frontier WHERE crawl_job_id = $1 AND url = $2`,
          [job.id, `${site.origin}/guide`],
        );
        if (rows[0]?.outcome === 'created' && site.requests.includes('/guide?edition=pocket')) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      death.abort(new Error('worker process killed'));
      await assert.rejects(running);
      open();
      h.startWorkers({ staleMs: 400 });
      try {
        const done = await h.waitDone(job.id);
        assert.equal(done.status, 'completed', JSON.stringify(done));
        assert.equal(
          done.refused['near_duplicate']?.of?.[`${site.origin}/guide?edition=pocket`],
          `${site.origin}/guide`,
        );
        const guides = (await h.crawledItems()).filter((i) =>
          i.source_url.startsWith(`${site.origin}/guide`),
        );
        assert.deepEqual(guides.map((i) => new URL(i.source_url).pathname).sort(), [
          '/guide',
          '/guide-extended',
        ]);
      } finally {
        await h.pool?.stop();
        h.pool = null;
      }
    });
  });
}
