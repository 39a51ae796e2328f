/**
 * The support_desk (Zendesk) side of inbound webhooks, against the fake account and a loopback receiver:
 * the subscription through the Webhooks API (created with the article events and the subdomain header,
 * its signing secret read, deleted on unsubscribe), the signature of what the fake sends the way Zendesk
 * does (valid; wrong secret, tampered body, stale or missing timestamp refused), the parse of each event
 * type, and the re-read of exactly the articles an event names (documents the scheduled sync would make,
 * deletions for drafts and archived articles, a 403 as that article's failure); and, through the API,
 * an edit at the fake reaching search by a signed event, a forged one changing nothing.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it, test } from 'node:test';
import { createConnectorContext } from '../../src/connectors/context.ts';
import type { SupportDeskCredentials } from '../../src/connectors/support-desk/client.ts';
import { supportDeskConnector } from '../../src/connectors/support-desk/index.ts';
import { ARTICLES_TABLE, type SupportDeskCursor } from '../../src/connectors/support-desk/sync.ts';
import {
  ACCOUNT_HEADER,
  ARTICLE_PUBLISHED,
  ARTICLE_UNPUBLISHED,
  REPLAY_WINDOW_MS,
} from '../../src/connectors/support-desk/webhooks.ts';
import type {
  ChangedDocument,
  SourceWebhooks,
  SyncEvent,
  WebhookRequest,
  WebhookSubscription,
} from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import { FAST_SOURCE_HTTP, FAST_WORKERS, itemTitles, waitFor, waitForJob } from '../jobs/helpers.ts';
import { withSearch } from '../support/embedding.ts';
import { STORAGE_MODES, startTestApp, type TestApp } from '../support/harness.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { type FakeZendesk, FakeZendeskAccount, startFakeZendesk, ZENDESK_GOOD } from '../fakes/zendesk.ts';
import { fastHttp, SyncedSet } from './helpers.ts';

const input = { subdomain: 'acme', ...ZENDESK_GOOD };
const hooks = supportDeskConnector.webhooks as SourceWebhooks<SupportDeskCredentials>;

/** A loopback endpoint that records what it is sent, headers and raw body, and answers `status`. */
interface Receiver {
  url: string;
  received: WebhookRequest[];
  status: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: WebhookRequest[] = [];
  const receiver = { url: '', received, status: 200, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: flatHeaders(req.headers), rawBody: Buffer.concat(chunks) });
      res.writeHead(receiver.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/connect/webhooks/support_desk`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

let fake: FakeZendesk | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await fake?.close();
  await receiver?.close();
  fake = undefined;
  receiver = undefined;
});

function contextFor(f: FakeZendesk, extra: Record<string, unknown> = {}) {
  return createConnectorContext({
    connector: supportDeskConnector,
    credentials: supportDeskConnector.normalize({ ...input, ...extra }),
    fetch: plainFetch,
    signal: new AbortController().signal,
    // The operator's template names the subdomain, so other brands' help centers are reachable.
    baseUrlTemplate: `${f.url}/{subdomain}`,
    http: { ...fastHttp(), requestsPerSecond: 100_000 },
  });
}

/** An account with one article in English and French, one in English only. */
function buildAccount() {
  const account = new FakeZendeskAccount();
  const section = account.addSection(account.addCategory('Guides'), 'Basics');
  const reset = account.addArticle({ section, title: 'Resetting your password' });
  const invoices = account.addArticle({ section, title: 'Downloading invoices' });
  account.addTranslation(reset.id, 'fr', { title: 'Réinitialiser votre mot de passe' });
  return { account, section, reset, invoices };
}

/** The fake, a receiver, and a subscription of the connection to it. */
async function subscribed(account: FakeZendeskAccount, extra: Record<string, unknown> = {}) {
  fake = await startFakeZendesk({ account });
  receiver = await startReceiver();
  const ctx = contextFor(fake, extra);
  const subscription = await hooks.subscribe!(ctx, { callbackUrl: receiver.url });
  return { fake, receiver, ctx, subscription };
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
  out.documents.sort();
  out.deleted.sort();
  return { ...out, docs };
}

const secretOf = (s: WebhookSubscription) => {
  assert.ok(s.secret, 'the subscription carries the signing secret');
  return s.secret;
};

describe('support_desk (Zendesk) webhooks: subscription', () => {
  it('creates a webhook for the article events with the subdomain header, reads its secret, and deletes it', async () => {
    const s = buildAccount();
    const { fake, receiver, ctx, subscription } = await subscribed(s.account);
    const [hook] = [...fake.account.webhooks.values()];
    assert.ok(hook);
    assert.deepEqual(subscription.ids, [hook.id]);
    assert.equal(subscription.secret, hook.secret);
    assert.equal(hook.endpoint, receiver.url);
    assert.equal(hook.status, 'active');
    assert.deepEqual(hook.subscriptions.sort(), [ARTICLE_PUBLISHED, ARTICLE_UNPUBLISHED].sort());
    assert.deepEqual(hook.custom_headers, { [ACCOUNT_HEADER]: 'acme' });
    const create = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/api/v2/webhooks'));
    assert.ok(create);
    assert.equal(create.headers.authorization?.startsWith('Basic '), true);
    assert.deepEqual(
      hooks.signingSecrets({
        credentials: ctx.credentials,
        subscription,
        settings: {},
        handshakeSecrets: [],
      }),
      [hook.secret],
    );

    await hooks.unsubscribe!(ctx, subscription);
    assert.equal(fake.account.webhooks.size, 0);
    // Already gone: not an error.
    await hooks.unsubscribe!(ctx, subscription);
  });

  it('a user who may not manage webhooks: subscribe fails with the source error and leaves nothing', async () => {
    const s = buildAccount();
    s.account.webhooksForbidden = true;
    fake = await startFakeZendesk({ account: s.account });
    await assert.rejects(
      hooks.subscribe!(contextFor(fake), { callbackUrl: 'https://kb.example/hook' }),
      /403/,
    );
    assert.equal(fake.account.webhooks.size, 0);
  });

  it('a secret that cannot be read deletes the webhook it just created', async () => {
    const s = buildAccount();
    s.account.onRequest = (req) =>
      req.path.endsWith('/signing_secret')
        ? { status: 404, body: { errors: [{ code: 'RecordNotFound' }] } }
        : undefined;
    fake = await startFakeZendesk({ account: s.account });
    await assert.rejects(hooks.subscribe!(contextFor(fake), { callbackUrl: 'https://kb.example/hook' }));
    assert.equal(fake.account.webhooks.size, 0);
  });
});

describe('support_desk (Zendesk) webhooks: signature', () => {
  it('accepts what Zendesk sends with the subscription secret; refuses a wrong secret, a tampered body, a stale or missing timestamp', async () => {
    const s = buildAccount();
    const { fake, receiver, subscription } = await subscribed(s.account);
    const secret = secretOf(subscription);
    const sent = await fake.account.sendArticleEvent('published', s.reset.id);
    assert.deepEqual(
      sent.map((d) => d.status),
      [200],
    );
    const [req] = receiver.received;
    assert.ok(req);
    const now = Date.now();
    assert.equal(hooks.verify(req, secret, { now }), 'valid');
    assert.equal(hooks.accountOf(req), 'acme');
    assert.equal(hooks.connectionAccount(supportDeskConnector.normalize(input)), 'acme');

    assert.equal(hooks.verify(req, `${secret}x`, { now }), 'bad_signature');
    assert.equal(hooks.verify(req, '', { now }), 'bad_signature');
    const tampered = Buffer.from(
      req.rawBody.toString('utf8').replace(String(s.reset.id), String(s.invoices.id)),
    );
    assert.notDeepEqual(tampered, req.rawBody);
    assert.equal(hooks.verify({ ...req, rawBody: tampered }, secret, { now }), 'bad_signature');
    const { 'x-zendesk-webhook-signature-timestamp': _t, ...noTimestamp } = req.headers;
    assert.equal(hooks.verify({ ...req, headers: noTimestamp }, secret, { now }), 'bad_signature');
    const { 'x-zendesk-webhook-signature': _s, ...noSignature } = req.headers;
    assert.equal(hooks.verify({ ...req, headers: noSignature }, secret, { now }), 'bad_signature');
    // The same request, proven, but played again later than the window (or from a clock far ahead).
    assert.equal(hooks.verify(req, secret, { now: now + REPLAY_WINDOW_MS + 60_000 }), 'stale');
    assert.equal(hooks.verify(req, secret, { now: now - REPLAY_WINDOW_MS - 60_000 }), 'stale');
  });

  it('a request signed long ago is stale; a changed timestamp header breaks the signature', async () => {
    const s = buildAccount();
    const { fake, receiver, subscription } = await subscribed(s.account);
    const secret = secretOf(subscription);
    await fake.account.sendArticleEvent('published', s.reset.id, { timestamp: '2021-03-25T05:09:27Z' });
    const [old] = receiver.received;
    assert.ok(old);
    assert.equal(hooks.verify(old, secret, { now: Date.now() }), 'stale');
    const moved = {
      ...old,
      headers: { ...old.headers, 'x-zendesk-webhook-signature-timestamp': new Date().toISOString() },
    };
    assert.equal(hooks.verify(moved, secret, { now: Date.now() }), 'bad_signature');
  });

  it('a request without the subdomain header names no account', () => {
    assert.equal(hooks.accountOf({ headers: {}, rawBody: Buffer.from('{}') }), null);
    assert.equal(
      hooks.accountOf({ headers: { [ACCOUNT_HEADER]: 'not a host!' }, rawBody: Buffer.from('{}') }),
      null,
    );
    assert.equal(
      hooks.accountOf({ headers: { [ACCOUNT_HEADER]: 'Acme' }, rawBody: Buffer.from('{}') }),
      'acme',
    );
  });
});

describe('support_desk (Zendesk) webhooks: events', () => {
  it('parses published and unpublished into the article to read, by the event id; other article events are ignored', async () => {
    const s = buildAccount();
    const { fake, receiver } = await subscribed(s.account);
    // A webhook of someone else's subscribed to every article event: the parse sees those too.
    const all = await hooks.subscribe!(contextFor(fake), { callbackUrl: receiver.url });
    fake.account.webhooks
      .get(all.ids[0]!)!
      .subscriptions.push('zen:event-type:article.vote_created', 'zen:event-type:article.comment_created');
    await fake.account.sendArticleEvent('published', s.reset.id, { locale: 'fr' });
    await fake.account.sendArticleEvent('unpublished', s.invoices.id);
    await fake.account.sendArticleEvent('vote_created', s.invoices.id);
    const [published, , unpublished, , vote] = receiver.received.map((r) => hooks.parse(r));
    const ids = fake.account.webhookDeliveries.map((d) => d.eventId);

    assert.deepEqual(published, {
      kind: 'changes',
      eventId: ids[0],
      occurredAt: JSON.parse(receiver.received[0]!.rawBody.toString()).time,
      changes: [{ table: ARTICLES_TABLE, externalId: String(s.reset.id), deleted: false }],
    });
    assert.equal(unpublished?.kind, 'changes');
    assert.deepEqual(unpublished?.kind === 'changes' && unpublished.changes, [
      { table: ARTICLES_TABLE, externalId: String(s.invoices.id), deleted: true },
    ]);
    assert.deepEqual(vote, { kind: 'ignored', eventId: ids[4] });
  });

  it('refuses a body that is not a Zendesk event, and an article event naming no article', () => {
    const req = (body: string): WebhookRequest => ({ headers: {}, rawBody: Buffer.from(body) });
    for (const body of ['not json', '[]', '{"type":"zen:event-type:article.published"}', '{"id":"x"}']) {
      assert.throws(
        () => hooks.parse(req(body)),
        (err: unknown) => err instanceof AppError && err.code === 'invalid_request',
        body,
      );
    }
    assert.throws(
      () => hooks.parse(req('{"id":"e1","type":"zen:event-type:article.published","detail":{}}')),
      (err: unknown) => err instanceof AppError && err.code === 'invalid_request',
    );
    // The id from the subject, when the detail has none.
    assert.deepEqual(
      hooks.parse(req('{"id":"e2","type":"zen:event-type:article.unpublished","subject":"zen:article:42"}')),
      {
        kind: 'changes',
        eventId: 'e2',
        changes: [{ table: ARTICLES_TABLE, externalId: '42', deleted: true }],
      },
    );
    assert.deepEqual(
      hooks.parse(req('{"id":"e3","type":"zen:event-type:user.created","detail":{"id":"7"}}')),
      {
        kind: 'ignored',
        eventId: 'e3',
      },
    );
  });
});

describe('support_desk (Zendesk) syncChanged', () => {
  const change = (id: number | string, deleted = false): ChangedDocument => ({
    table: ARTICLES_TABLE,
    externalId: String(id),
    deleted,
  });

  it('reads exactly the named article in every language, as the scheduled sync makes it, so the next sync reads it not again', async () => {
    const s = buildAccount();
    fake = await startFakeZendesk({ account: s.account });
    const set = new SyncedSet<SupportDeskCursor>(supportDeskConnector, input, `${fake.url}/{subdomain}`);
    await set.sync();
    s.account.editArticle(s.reset.id, { title: 'Resetting a password', body: '<p>Use the link.</p>' });
    s.account.editTranslation(s.reset.id, 'fr', { body: '<p>Utilisez le lien.</p>' });
    const before = fake.requests.length;

    const ctx = contextFor(fake);
    const got = await collect(
      supportDeskConnector.syncChanged!(ctx, [change(s.reset.id), change(s.reset.id)]),
    );
    assert.deepEqual(got.documents, [`${s.reset.id}`, `${s.reset.id}:fr`].sort());
    assert.deepEqual(got.deleted, []);
    assert.deepEqual(got.failures, []);
    const en = got.docs.get(`${s.reset.id}`)!;
    assert.equal(en.title, 'Resetting a password');
    assert.match(en.markdown, /Use the link\./);
    assert.deepEqual(en.tags, ['support_desk', 'locale:en-us', 'Guides', 'Basics']);
    assert.match(got.docs.get(`${s.reset.id}:fr`)!.markdown, /Utilisez le lien\./);
    // Only that article (its record, its translations) and the names around it: no export, no listing.
    const paths = fake.requests.slice(before).map((r) => r.path.replace(/^\/acme/, ''));
    assert.deepEqual(paths.filter((p) => p.includes('/articles')).sort(), [
      `/api/v2/help_center/articles/${s.reset.id}`,
      `/api/v2/help_center/articles/${s.reset.id}/translations`,
    ]);
    assert.equal(
      paths.some((p) => p.includes('incremental')),
      false,
    );

    // What the connection holds now is what the scheduled sync would make: it yields nothing again.
    for (const doc of got.docs.values()) set.hold(doc);
    const next = await set.sync();
    assert.deepEqual(
      next.documents.map((d) => d.externalId),
      [],
    );
  });

  it('an article back to draft, or archived, leaves; a 403 is that article failure', async () => {
    const s = buildAccount();
    fake = await startFakeZendesk({ account: s.account });
    const ctx = contextFor(fake);
    s.account.draftArticle(s.reset.id);
    let got = await collect(supportDeskConnector.syncChanged!(ctx, [change(s.reset.id, true)]));
    // The default language is a draft; the French translation is still published.
    assert.deepEqual(got.deleted, [`${s.reset.id}`]);
    assert.deepEqual(got.documents, [`${s.reset.id}:fr`]);

    s.account.archiveArticle(s.reset.id);
    got = await collect(supportDeskConnector.syncChanged!(ctx, [change(s.reset.id, true)]));
    assert.deepEqual(got.deleted, [`${s.reset.id}`, `${s.reset.id}:fr`].sort());
    assert.deepEqual(got.documents, []);

    s.account.onRequest = (req) =>
      req.path.endsWith(`/articles/${s.invoices.id}`)
        ? { status: 403, body: { error: 'Forbidden', description: 'You do not have access to this page.' } }
        : undefined;
    got = await collect(supportDeskConnector.syncChanged!(ctx, [change(s.invoices.id)]));
    assert.deepEqual(got.documents, []);
    assert.deepEqual(got.deleted, []);
    assert.equal(got.failures.length, 1);
    const failure = got.failures[0] as Extract<SyncEvent<never>, { kind: 'failure' }>;
    assert.equal(failure.externalId, `${s.invoices.id}`);
    assert.equal(failure.retryable, false);
    assert.match(failure.error.message, /403/);
  });

  it('with brands, finds the article in its brand help center', async () => {
    const s = buildAccount();
    const brand = s.account.addBrand('support');
    const bs = brand.account.addSection(brand.account.addCategory('Help'), 'FAQ');
    const faq = brand.account.addArticle({ section: bs, title: 'Brand FAQ' });
    const { fake, receiver } = await subscribed(s.account, { brands: 'all' });
    await fake.account.sendArticleEvent('published', faq.id, { brand });
    const message = hooks.parse(receiver.received[0]!);
    assert.equal(message.kind, 'changes');
    const ctx = contextFor(fake, { brands: 'all' });
    const got = await collect(
      supportDeskConnector.syncChanged!(ctx, message.kind === 'changes' ? message.changes : []),
    );
    assert.deepEqual(got.documents, [`support/${faq.id}`]);
    assert.deepEqual(got.docs.get(`support/${faq.id}`)!.tags, [
      'support_desk',
      'locale:en-us',
      'brand:support',
      'Help',
      'FAQ',
    ]);
  });
});

for (const mode of STORAGE_MODES) {
  describe(`support_desk webhooks end to end through the API (${mode})`, () => {
    let zendesk: FakeZendesk;
    let t: TestApp;
    let search: Awaited<ReturnType<typeof withSearch>>;
    let s: ReturnType<typeof buildAccount>;
    before(async () => {
      s = buildAccount();
      zendesk = await startFakeZendesk({ account: s.account });
      t = await startTestApp(mode, {
        config: {
          KB_CRAWL_ALLOW_PRIVATE: 'true',
          KB_SUPPORT_DESK_BASE_URL: zendesk.url,
          KB_PUBLIC_URL: 'https://kb.example.test',
        },
        parts: { sourceHttp: { ...FAST_SOURCE_HTTP, requestsPerSecond: 100_000 } },
      });
      search = await withSearch(t);
      t.service.startWorkers({ concurrency: 1, ...FAST_WORKERS, listenUrl: null });
      // Zendesk's requests reach the public route (no API key) with the body and headers as sent.
      s.account.webhookTransport = async (endpoint, headers, body) =>
        (await t.call('POST', new URL(endpoint).pathname, { key: null, body, headers })).status;
    });
    after(async () => {
      await t?.close();
      await zendesk?.close();
    });

    /** The stored text of the organization's item titled `title` ('' when there is none). */
    const itemText = async (title: string) => {
      const rows = await t.db.query<{ content: string }>(
        'SELECT content FROM items WHERE organization_id = $1 AND title = $2',
        [t.orgA.id, title],
      );
      return rows[0]?.content ?? '';
    };

    test('subscribes on create; a signed event makes an edit searchable, a forged one changes nothing; unsubscribes on delete', async () => {
      const created = await t.call('POST', '/api/connect/connection', {
        body: { source: { type: 'zendesk', subdomain: 'acme', ...ZENDESK_GOOD }, sync: false },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const [hook] = [...s.account.webhooks.values()];
      assert.ok(hook, 'a webhook created at Zendesk');
      assert.equal(hook.endpoint, 'https://kb.example.test/api/connect/webhooks/support_desk');
      const run = await t.call('POST', '/api/connect/run-sync', { body: { type: 'support_desk' } });
      assert.equal((await waitForJob(t, run.body.jobId as number, undefined, 60_000)).status, 'succeeded');

      const sentence = 'Password resets now need the code from the authenticator app.';
      s.account.editArticle(s.reset.id, { body: `<p>${sentence}</p>` });
      // Signed with another secret: refused, nothing read.
      const realSecret = hook.secret;
      hook.secret = 'c29tZW9uZSBlbHNlJ3Mgc2VjcmV0';
      const [forged] = await s.account.sendArticleEvent('published', s.reset.id);
      hook.secret = realSecret;
      assert.equal(forged?.status, 401);
      // Signed too long ago: refused as well.
      const [stale] = await s.account.sendArticleEvent('published', s.reset.id, {
        timestamp: '2021-03-25T05:09:27Z',
      });
      assert.equal(stale?.status, 401);
      assert.ok(!(await itemText('Resetting your password')).includes(sentence), 'nothing read for them');

      const [delivered] = await s.account.sendArticleEvent('published', s.reset.id);
      assert.equal(delivered?.status, 200);
      // Zendesk sending the same event again (its request timed out on its side): accepted, no more work.
      const [again] = await s.account.sendArticleEvent('published', s.reset.id, {
        eventId: delivered!.eventId,
      });
      assert.equal(again?.status, 200);
      await waitFor(
        async () => (await itemText('Resetting your password')).includes(sentence),
        30_000,
        'the edit stored',
      );
      const reads = () =>
        zendesk.requests.filter((r) => r.path === `/api/v2/help_center/articles/${s.reset.id}`).length;
      assert.equal(reads(), 1, 'the article read once for the event and its repeat');
      await search.drain();
      const found = await t.call('POST', '/api/consume/search', {
        body: { query: 'what do password resets need now?', limit: 3, includeEmbedding: false },
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.result[0]?.title, 'Resetting your password');

      s.account.draftArticle(s.invoices.id);
      assert.equal((await s.account.sendArticleEvent('unpublished', s.invoices.id))[0]?.status, 200);
      await waitFor(
        async () => !(await itemTitles(t)).includes('Downloading invoices'),
        30_000,
        'the unpublished article removed',
      );
      // Another organization sees none of it; the repeated event never made a second read.
      assert.deepEqual(await itemTitles(t, t.orgB.key), []);
      assert.equal(reads(), 1);

      const deleted = await t.call('DELETE', '/api/connect/connection', { body: { type: 'support_desk' } });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      await waitFor(() => s.account.webhooks.size === 0, 30_000, 'the webhook deleted at Zendesk');
    });
  });
}
