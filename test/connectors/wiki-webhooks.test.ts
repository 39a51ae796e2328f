/**
 * The wiki (Confluence Cloud) side of inbound change notifications, against the fake site: what its
 * Automation rule sends (the secret header; a signing relay's `X-Hub-Signature`) verified with the
 * connection's `webhook_secret` (valid; wrong secret, missing header, tampered signed body refused), the
 * parse of the rule's body, and the re-read of exactly the pages and blog posts an event names (documents
 * the scheduled sync would make; trashed, purged, restricted or in an archived space: deleted); and,
 * through the API in both storage modes, an edit reaching search by an event, a forged one changing
 * nothing, a trashed page leaving, and another organization connected to the same site untouched.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, afterEach, before, describe, it, test } from 'node:test';
import { createConnectorContext } from '../../src/connectors/context.ts';
import { wikiConnector } from '../../src/connectors/wiki/index.ts';
import type { WikiCredentials } from '../../src/connectors/wiki/route.ts';
import { BLOGPOSTS_TABLE, PAGES_TABLE, type WikiCursor } from '../../src/connectors/wiki/sync.ts';
import { hubSignature, SECRET_HEADER, SIGNATURE_HEADER } from '../../src/connectors/wiki/webhooks.ts';
import type {
  ChangedDocument,
  SourceWebhooks,
  SyncEvent,
  WebhookRequest,
} from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import {
  CONFLUENCE_GOOD,
  CONFLUENCE_SCOPED,
  type FakeConfluence,
  FakeConfluenceSite,
  startFakeConfluence,
} from '../fakes/confluence.ts';
import { getSyncJob } from '../../src/db/repositories/sync-jobs.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, itemTitles, waitFor } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const SECRET = 'b1946ac92492d2347c6235b4d2611184b1946ac92492d2347c6235b4d2611184';
const OTHER_SECRET = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const input = { domain_name: 'acme', ...CONFLUENCE_GOOD, webhook_secret: SECRET };
const hooks = wikiConnector.webhooks as SourceWebhooks<WikiCredentials>;

/** Two spaces; a home page with a child, a blog post. */
function buildSite() {
  const site = new FakeConfluenceSite();
  site.addSpace('ENG', 'Engineering');
  site.addSpace('OLD', 'Legacy');
  const home = site.addPage({ space: 'ENG', title: 'Engineering Home', storage: '<p>Start here.</p>' });
  const review = site.addPage({
    space: 'ENG',
    title: 'Code review checklist',
    storage: '<p>Every pull request needs one approving review.</p>',
  });
  const post = site.addBlogPost({
    space: 'ENG',
    title: 'Release notes',
    storage: '<p>Version 2 shipped.</p>',
  });
  const legacy = site.addPage({ space: 'OLD', title: 'Legacy runbook', storage: '<p>Old steps.</p>' });
  return { site, home, review, post, legacy };
}

let fake: FakeConfluence | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function contextFor(f: FakeConfluence, extra: Record<string, unknown> = {}) {
  return createConnectorContext({
    connector: wikiConnector,
    credentials: wikiConnector.normalize({ ...input, ...extra }),
    fetch: plainFetch,
    signal: new AbortController().signal,
    baseUrlTemplate: f.url,
    http: { ...fastHttp(), requestsPerSecond: 100_000 },
    settings: { gatewayBaseUrl: f.gateway.url },
  });
}

/** What the fake's Automation rule sent, as the route receives it. */
async function captured(
  site: FakeConfluenceSite,
  event: string,
  content: Parameters<FakeConfluenceSite['runAutomation']>[1],
) {
  const [delivery] = await site.runAutomation(event, content);
  assert.ok(delivery);
  return { headers: delivery.headers, rawBody: Buffer.from(delivery.body) } satisfies WebhookRequest;
}

/** A rule that captures instead of sending. */
function capturingRule(site: FakeConfluenceSite, rule: { secret: string; sign?: boolean; site?: string }) {
  site.automationTransport = async () => 200;
  site.automationRules.push({
    url: 'https://kb.example.test/api/connect/webhooks/wiki',
    site: 'acme.atlassian.net',
    ...rule,
  });
}

async function collect(events: AsyncGenerator<SyncEvent<never>>) {
  const out = { documents: [] as string[], deleted: [] as string[], failures: [] as SyncEvent<never>[] };
  const docs = new Map<string, Extract<SyncEvent<never>, { kind: 'document' }>['doc']>();
  for await (const e of events) {
    if (e.kind === 'document') {
      out.documents.push(e.doc.externalId);
      docs.set(e.doc.externalId, e.doc);
    } else if (e.kind === 'deleted') out.deleted.push(e.externalId);
    else out.failures.push(e);
  }
  return { ...out, docs };
}

describe('wiki (Confluence) webhooks: proof', () => {
  it("accepts the rule's secret header with the connection's secret; refuses another secret, none, or a connection without one", async () => {
    const s = buildSite();
    capturingRule(s.site, { secret: SECRET });
    const req = await captured(s.site, 'page_updated', s.review);
    const now = Date.now();
    assert.equal(req.headers[SECRET_HEADER], SECRET);
    assert.equal(hooks.verify(req, SECRET, { now }), 'valid');
    assert.equal(hooks.verify(req, OTHER_SECRET, { now }), 'bad_signature');
    assert.equal(hooks.verify(req, `${SECRET}x`, { now }), 'bad_signature');
    assert.equal(hooks.verify(req, '', { now }), 'bad_signature');
    const { [SECRET_HEADER]: _secret, ...noHeader } = req.headers;
    assert.equal(hooks.verify({ ...req, headers: noHeader }, SECRET, { now }), 'bad_signature');

    const creds = wikiConnector.normalize(input);
    assert.equal(hooks.accountOf(req), 'acme.atlassian.net');
    assert.equal(hooks.connectionAccount(creds), 'acme.atlassian.net');
    const secretsOf = (c: WikiCredentials) =>
      hooks.signingSecrets({ credentials: c, subscription: null, settings: {}, handshakeSecrets: [] });
    assert.deepEqual(secretsOf(creds), [SECRET]);
    const { webhook_secret: _w, ...withoutSecret } = input;
    assert.deepEqual(secretsOf(wikiConnector.normalize(withoutSecret)), []);
  });

  it('a signed request (X-Hub-Signature) proves its body: a tampered body or a wrong key is refused, even with the secret header', async () => {
    const s = buildSite();
    capturingRule(s.site, { secret: SECRET, sign: true });
    const req = await captured(s.site, 'page_updated', s.review);
    const now = Date.now();
    assert.equal(req.headers[SIGNATURE_HEADER], hubSignature(SECRET, req.rawBody));
    assert.equal(req.headers[SECRET_HEADER], undefined);
    assert.equal(hooks.verify(req, SECRET, { now }), 'valid');
    assert.equal(hooks.verify(req, OTHER_SECRET, { now }), 'bad_signature');
    const tampered = Buffer.from(req.rawBody.toString('utf8').replace(s.review.id, s.home.id));
    assert.notDeepEqual(tampered, req.rawBody);
    assert.equal(hooks.verify({ ...req, rawBody: tampered }, SECRET, { now }), 'bad_signature');
    // A wrong signature is not rescued by also knowing the secret.
    const both = { ...req, rawBody: tampered, headers: { ...req.headers, [SECRET_HEADER]: SECRET } };
    assert.equal(hooks.verify(both, SECRET, { now }), 'bad_signature');
    const garbled = { ...req, headers: { ...req.headers, [SIGNATURE_HEADER]: 'sha256=zz' } };
    assert.equal(hooks.verify(garbled, SECRET, { now }), 'bad_signature');
  });

  it('reads the site from the body in any form a person types it; none, or not a host: no account', () => {
    const req = (body: unknown): WebhookRequest => ({
      headers: {},
      rawBody: Buffer.from(JSON.stringify(body)),
    });
    assert.equal(hooks.accountOf(req({ site: 'acme' })), 'acme.atlassian.net');
    assert.equal(hooks.accountOf(req({ site: 'ACME.atlassian.net' })), 'acme.atlassian.net');
    assert.equal(hooks.accountOf(req({ site: 'https://acme.atlassian.net/wiki' })), 'acme.atlassian.net');
    assert.equal(hooks.accountOf(req({ site: 'wiki.example.com' })), 'wiki.example.com');
    assert.equal(hooks.accountOf(req({})), null);
    assert.equal(hooks.accountOf(req({ site: 'not a host!' })), null);
    assert.equal(hooks.accountOf({ headers: {}, rawBody: Buffer.from('not json') }), null);
  });

  it('a webhook secret is optional, and when given must be 32 to 255 characters without spaces', () => {
    for (const bad of ['short', 'x'.repeat(31), 'x'.repeat(256), `${'x'.repeat(20)} ${'x'.repeat(20)}`]) {
      assert.throws(
        () => wikiConnector.normalize({ ...input, webhook_secret: bad }),
        (err: unknown) =>
          err instanceof AppError &&
          err.code === 'invalid_request' &&
          /source\.webhook_secret/.test(err.message),
        bad,
      );
    }
    assert.equal(wikiConnector.normalize({ ...input, webhook_secret: ` ${SECRET} ` }).webhook_secret, SECRET);
  });

  it('the credential check keeps the webhook secret with the route it finds', async () => {
    fake = await startFakeConfluence({ site: buildSite().site });
    const checked = await wikiConnector.validate(contextFor(fake));
    assert.ok(checked);
    assert.equal(checked.webhook_secret, SECRET);
    assert.equal(checked.api_route, 'site');
  });
});

describe('wiki (Confluence) webhooks: parse', () => {
  it("turns the rule's body into the page or blog post to read, with an id per distinct body", async () => {
    const s = buildSite();
    capturingRule(s.site, { secret: SECRET });
    const updated = hooks.parse(await captured(s.site, 'page_updated', s.review));
    const again = hooks.parse(await captured(s.site, 'page_updated', s.review));
    const trashed = hooks.parse(await captured(s.site, 'page_trashed', s.review));
    const blog = hooks.parse(await captured(s.site, 'blog_updated', s.post));
    assert.equal(updated.kind, 'changes');
    assert.ok(updated.kind === 'changes' && again.kind === 'changes' && trashed.kind === 'changes');
    assert.deepEqual(updated.changes, [{ table: PAGES_TABLE, externalId: s.review.id, deleted: false }]);
    assert.match(updated.eventId, /^body-sha256:[0-9a-f]{40}$/);
    // The next run of the rule renders another `{{now}}`: another event, not a repeat.
    assert.notEqual(updated.eventId, again.eventId);
    assert.deepEqual(trashed.changes, [{ table: PAGES_TABLE, externalId: s.review.id, deleted: true }]);
    assert.deepEqual(blog.kind === 'changes' && blog.changes, [
      { table: BLOGPOSTS_TABLE, externalId: s.post.id, deleted: false },
    ]);
    // A retry of one request is the same event.
    const [first] = s.site.automationDeliveries;
    const retried = hooks.parse({ headers: first!.headers, rawBody: Buffer.from(first!.body) });
    assert.equal(retried.kind === 'changes' && retried.eventId, updated.eventId);
  });

  it("reads Automation's {{now}} as the time of the event; numbers as ids; other content types are ignored", () => {
    const req = (body: unknown): WebhookRequest => ({
      headers: {},
      rawBody: Buffer.from(JSON.stringify(body)),
    });
    const base = {
      site: 'acme.atlassian.net',
      contentType: 'page',
      contentId: '491527',
      at: '2026-11-28T08:00:00.0+0000',
    };
    const bodyId = `body-sha256:${createHash('sha256').update(JSON.stringify(base)).digest('hex').slice(0, 40)}`;
    assert.deepEqual(hooks.parse(req(base)), {
      kind: 'changes',
      eventId: bodyId,
      occurredAt: '2026-11-28T08:00:00.000Z',
      changes: [{ table: PAGES_TABLE, externalId: '491527', deleted: false }],
    });
    const numeric = hooks.parse(req({ ...base, contentId: 491527, at: 'yesterday' }));
    assert.ok(numeric.kind === 'changes');
    assert.equal(numeric.changes[0]?.externalId, '491527');
    assert.equal(numeric.occurredAt, undefined);
    assert.equal(hooks.parse(req({ ...base, contentType: 'comment' })).kind, 'ignored');
  });

  it('refuses a body that is not the rule’s', () => {
    const req = (body: string): WebhookRequest => ({ headers: {}, rawBody: Buffer.from(body) });
    const good = { site: 'acme', contentType: 'page', contentId: '1', at: 'x' };
    for (const body of [
      'not json',
      '[]',
      JSON.stringify({ ...good, contentId: '../1' }),
      JSON.stringify({ ...good, contentId: '' }),
      JSON.stringify({ ...good, at: undefined }),
      JSON.stringify({ ...good, contentType: undefined }),
    ]) {
      assert.throws(
        () => hooks.parse(req(body)),
        (err: unknown) => err instanceof AppError && err.code === 'invalid_request',
        body,
      );
    }
  });
});

describe('wiki (Confluence) syncChanged', () => {
  const change = (table: string, id: string, deleted = false): ChangedDocument => ({
    table,
    externalId: id,
    deleted,
  });

  it('reads exactly the named documents as the scheduled sync makes them, so the next sync reads them not again', async () => {
    const s = buildSite();
    fake = await startFakeConfluence({ site: s.site });
    const set = new SyncedSet<WikiCursor>(wikiConnector, input, fake.url);
    await set.sync();
    s.site.edit(s.review.id, { storage: '<p>Two approving reviews are needed now.</p>' });
    s.site.edit(s.post.id, { title: 'Release notes for version 2' });
    const before = fake.requests.length;

    const got = await collect(
      wikiConnector.syncChanged!(contextFor(fake), [
        change(PAGES_TABLE, s.review.id),
        change(PAGES_TABLE, s.review.id),
        change(BLOGPOSTS_TABLE, s.post.id),
      ]),
    );
    assert.deepEqual(got.documents, [s.review.id, s.post.id]);
    assert.deepEqual(got.deleted, []);
    assert.deepEqual(got.failures, []);
    const review = got.docs.get(s.review.id)!;
    assert.match(review.markdown, /Two approving reviews/);
    assert.deepEqual(review, {
      ...set.doc(s.review.id)!,
      markdown: review.markdown,
      version: review.version,
      updatedAt: review.updatedAt,
    });
    assert.deepEqual(review.tags, ['wiki', 'ENG', 'Engineering', 'Engineering Home']);
    assert.equal(review.url, s.site.url(s.site.get(s.review.id)));
    assert.equal(got.docs.get(s.post.id)!.title, 'Release notes for version 2');
    // The page, its space and its parent; the blog post (its space already known): no listing.
    const paths = fake.requests.slice(before).map((r) => r.path);
    assert.deepEqual(paths, [
      `/wiki/api/v2/pages/${s.review.id}`,
      `/wiki/api/v2/spaces/${s.site.spaceByKey('ENG').id}`,
      `/wiki/api/v2/pages/${s.home.id}`,
      `/wiki/api/v2/blogposts/${s.post.id}`,
    ]);

    for (const doc of got.docs.values()) set.hold(doc);
    const next = await set.sync();
    assert.deepEqual(
      next.documents.map((d) => d.externalId),
      [],
    );
  });

  it('trashed, purged, restricted, or in an archived space: deleted; a 5xx is that document’s retryable failure', async () => {
    const s = buildSite();
    const other = s.site.addPage({ space: 'ENG', title: 'Restricted page' });
    fake = await startFakeConfluence({ site: s.site });
    const ctx = contextFor(fake);
    s.site.setStatus(s.review.id, 'trashed');
    s.site.purge(s.post.id);
    s.site.restrict(other.id);
    s.site.archiveSpace('OLD');
    const got = await collect(
      wikiConnector.syncChanged!(ctx, [
        change(PAGES_TABLE, s.review.id, true),
        change(BLOGPOSTS_TABLE, s.post.id, true),
        change(PAGES_TABLE, other.id),
        change(PAGES_TABLE, s.legacy.id),
      ]),
    );
    assert.deepEqual(got.documents, []);
    assert.deepEqual(got.deleted, [s.review.id, s.post.id, other.id, s.legacy.id]);
    assert.deepEqual(got.failures, []);

    fake.unavailableNext(20);
    const failed = await collect(wikiConnector.syncChanged!(ctx, [change(PAGES_TABLE, s.home.id)]));
    assert.equal(failed.failures.length, 1);
    const failure = failed.failures[0] as Extract<SyncEvent<never>, { kind: 'failure' }>;
    assert.equal(failure.externalId, s.home.id);
    assert.equal(failure.table, PAGES_TABLE);
    assert.equal(failure.retryable, true);
  });

  it('a scoped token reads through the gateway, as its sync does', async () => {
    const s = buildSite();
    s.site.addScopedToken(CONFLUENCE_SCOPED);
    fake = await startFakeConfluence({ site: s.site });
    const base = contextFor(fake, CONFLUENCE_SCOPED);
    const ctx = { ...base, credentials: (await wikiConnector.validate(base))! };
    assert.equal(ctx.credentials.api_route, 'gateway');
    const before = fake.gateway.requests.length;
    const got = await collect(wikiConnector.syncChanged!(ctx, [change(PAGES_TABLE, s.review.id)]));
    assert.deepEqual(got.documents, [s.review.id]);
    assert.ok(fake.gateway.requests.length > before, 'read through the gateway');
  });
});

for (const mode of STORAGE_MODES) {
  describe(`wiki webhooks end to end through the API (${mode})`, () => {
    let confluence: FakeConfluence;
    let t: TestApp;
    let search: Awaited<ReturnType<typeof withSearch>>;
    let s: ReturnType<typeof buildSite>;
    before(async () => {
      s = buildSite();
      confluence = await startFakeConfluence({ site: s.site });
      t = await startTestApp(mode, {
        config: {
          KB_CRAWL_ALLOW_PRIVATE: 'true',
          KB_WIKI_BASE_URL: confluence.url,
          KB_ATLASSIAN_API_BASE_URL: confluence.gateway.url,
          KB_PUBLIC_URL: 'https://kb.example.test',
        },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      search = await withSearch(t);
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
      // The rule's requests reach the public route (no API key) with the body and headers as sent.
      s.site.automationTransport = async (url, headers, body) =>
        (await t.call('POST', new URL(url).pathname, { key: null, body, headers })).status;
    });
    after(async () => {
      await t?.close();
      await confluence?.close();
    });

    const itemText = async (orgId: string, title: string) => {
      const rows = await t.db.query<{ content: string }>(
        'SELECT content FROM items WHERE organization_id = $1 AND title = $2',
        [orgId, title],
      );
      return rows[0]?.content ?? '';
    };

    const connectAndSync = async (org: { id: string; key: string }, secret: string) => {
      const created = await t.call('POST', '/api/connect/connection', {
        key: org.key,
        body: { source: { type: 'confluence', ...input, webhook_secret: secret }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.ok(!JSON.stringify(created.body).includes(secret), 'the secret is never answered');
      const run = await t.call('POST', '/api/connect/run-sync', { key: org.key, body: { type: 'wiki' } });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      const jobId = run.body.jobId as number;
      let status: string | undefined;
      await waitFor(
        async () => {
          status = (await getSyncJob(t.db, org.id, jobId))?.status;
          return status !== undefined && ['succeeded', 'failed', 'cancelled', 'incomplete'].includes(status);
        },
        60_000,
        'the first sync',
      );
      assert.equal(status, 'succeeded');
    };

    test("the rule's event makes an edit searchable, a forged one changes nothing, a trashed page leaves; another organization's connection of the site is untouched", async () => {
      await connectAndSync(t.orgA, SECRET);
      await connectAndSync(t.orgB, OTHER_SECRET);
      const rule = { url: 'https://kb.example.test/api/connect/webhooks/wiki', site: 'acme.atlassian.net' };

      const sentence = 'Every pull request now needs two approving reviews and a security sign-off.';
      s.site.edit(s.review.id, { storage: `<p>${sentence}</p>` });
      const reads = () =>
        confluence.requests.filter((r) => r.path === `/wiki/api/v2/pages/${s.review.id}`).length;
      const readsBefore = reads();
      // A rule with a secret no connection has: refused, nothing read.
      s.site.automationRules.push({ ...rule, secret: 'f'.repeat(64) });
      const [forged] = await s.site.runAutomation('page_updated', s.review);
      assert.equal(forged?.status, 401);
      // A signing relay whose signature does not match the body: refused as well.
      s.site.automationRules.splice(0, 1, { ...rule, secret: SECRET, sign: true });
      s.site.automationTransport = async (url, headers, body) =>
        (
          await t.call('POST', new URL(url).pathname, {
            key: null,
            body: body.replace('page_updated', 'page_edited'),
            headers,
          })
        ).status;
      const [tampered] = await s.site.runAutomation('page_updated', s.review);
      assert.equal(tampered?.status, 401);
      s.site.automationTransport = async (url, headers, body) =>
        (await t.call('POST', new URL(url).pathname, { key: null, body, headers })).status;
      assert.equal(reads(), readsBefore, 'nothing read for them');

      // Organization A's rule.
      s.site.automationRules.splice(0, 1, { ...rule, secret: SECRET });
      const [delivered] = await s.site.runAutomation('page_updated', s.review);
      assert.equal(delivered?.status, 200);
      // Automation sending the same request again: accepted, no more work.
      assert.equal(
        (
          await t.call('POST', '/api/connect/webhooks/wiki', {
            key: null,
            body: delivered!.body,
            headers: delivered!.headers,
          })
        ).status,
        200,
      );
      await waitFor(
        async () => (await itemText(t.orgA.id, 'Code review checklist')).includes(sentence),
        30_000,
        'the edit stored',
      );
      assert.equal(reads(), readsBefore + 1, 'the page read once for the event and its repeat');
      await search.drain();
      const found = await t.call('POST', '/api/consume/search', {
        body: {
          query: 'how many approving reviews does a pull request need?',
          limit: 3,
          includeEmbedding: false,
        },
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.result[0]?.title, 'Code review checklist');

      s.site.setStatus(s.post.id, 'trashed');
      assert.equal((await s.site.runAutomation('blog_trashed', s.post))[0]?.status, 200);
      await waitFor(
        async () => !(await itemTitles(t)).includes('Release notes'),
        30_000,
        'the trashed blog post removed',
      );

      // Organization B connected the same site with its own secret: A's events reach only A.
      assert.ok(!(await itemText(t.orgB.id, 'Code review checklist')).includes(sentence));
      assert.ok((await itemTitles(t, t.orgB.key)).includes('Release notes'));
    });
  });
}
