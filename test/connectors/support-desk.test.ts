import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { supportDeskConnector } from '../../src/connectors/support-desk/index.ts';
import { closedPortUrl, type FakeServer } from '../fakes/fake-server.ts';
import { startFakeZendesk, ZENDESK_GOOD, ZENDESK_GOOD_ACCESS_TOKEN } from '../fakes/zendesk.ts';
import { rejectsWithCode, runCheck, throwsInvalid } from './helpers.ts';

const good = { subdomain: 'acme', ...ZENDESK_GOOD };

describe('support_desk (Zendesk) credential check', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeZendesk();
  });
  after(() => fake.close());

  it('accepts good credentials with one Basic-authenticated GET /api/v2/users/me.json', async () => {
    const before = fake.requests.length;
    await runCheck(supportDeskConnector, good, fake.url);
    const sent = fake.requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.method, 'GET');
    assert.equal(sent[0]!.path, '/api/v2/users/me.json');
    const expected = Buffer.from(`${good.email}/token:${good.api_token}`).toString('base64');
    assert.equal(sent[0]!.headers.authorization, `Basic ${expected}`);
  });

  it('fills {subdomain} of an operator base-URL template', async () => {
    const before = fake.requests.length;
    await runCheck(
      supportDeskConnector,
      { ...good, subdomain: 'ACME.zendesk.com' },
      `${fake.url}/{subdomain}`,
    );
    assert.equal(fake.requests[before]!.path, '/acme/api/v2/users/me.json');
  });

  it('rejects a wrong token as source_auth_failed, saying what Zendesk answered, without the token', async () => {
    const err = await rejectsWithCode(
      runCheck(supportDeskConnector, { ...good, api_token: 'wrong-token-123' }, fake.url),
      'source_auth_failed',
    );
    assert.match(err.message, /Zendesk/);
    assert.match(err.message, /HTTP 401/);
    assert.match(err.message, /Couldn't authenticate you/);
    assert.doesNotMatch(err.message, /wrong-token-123/);
  });

  it('treats an answer as the anonymous user as rejected credentials', async () => {
    fake.failNext(1, { status: 200, body: { user: { id: null, name: 'Anonymous user', role: 'end-user' } } });
    const err = await rejectsWithCode(runCheck(supportDeskConnector, good, fake.url), 'source_auth_failed');
    assert.match(err.message, /anonymous/);
  });

  it('waits out a 429 with Retry-After, then succeeds', async () => {
    fake.rateLimitNext(1, 2);
    const delays: number[] = [];
    await runCheck(supportDeskConnector, good, fake.url, delays);
    assert.deepEqual(delays, [2000]);
  });

  it('answers source_unreachable when the source keeps failing with 503', async () => {
    fake.unavailableNext(3);
    const err = await rejectsWithCode(runCheck(supportDeskConnector, good, fake.url), 'source_unreachable');
    assert.match(err.message, /HTTP 503/);
  });

  it('sends an OAuth access token as Bearer, which Zendesk accepts, and prefers it over an API token', async () => {
    const before = fake.requests.length;
    await runCheck(
      supportDeskConnector,
      { subdomain: 'acme', access_token: ZENDESK_GOOD_ACCESS_TOKEN },
      fake.url,
    );
    await runCheck(supportDeskConnector, { ...good, access_token: ZENDESK_GOOD_ACCESS_TOKEN }, fake.url);
    const sent = fake.requests.slice(before);
    assert.deepEqual(
      sent.map((r) => [r.path, r.headers.authorization]),
      [
        ['/api/v2/users/me.json', `Bearer ${ZENDESK_GOOD_ACCESS_TOKEN}`],
        ['/api/v2/users/me.json', `Bearer ${ZENDESK_GOOD_ACCESS_TOKEN}`],
      ],
    );
  });

  it('rejects a revoked access token as source_auth_failed with the OAuth hint, without the token', async () => {
    const err = await rejectsWithCode(
      runCheck(
        supportDeskConnector,
        { subdomain: 'acme', access_token: 'zd_oauth_revoked_000111' },
        fake.url,
      ),
      'source_auth_failed',
    );
    assert.match(err.message, /HTTP 401: Couldn't authenticate you/);
    assert.match(err.message, /reconnect support_desk through OAuth/);
    assert.doesNotMatch(err.message, /zd_oauth_revoked_000111/);
  });

  it('answers source_unreachable when nothing listens', async () => {
    const err = await rejectsWithCode(
      runCheck(supportDeskConnector, good, await closedPortUrl()),
      'source_unreachable',
    );
    assert.match(err.message, /ECONNREFUSED/);
  });
});

describe('support_desk normalize', () => {
  const n = (subdomain: string) => supportDeskConnector.normalize({ ...good, subdomain }).subdomain;

  it('keeps the bare subdomain of a name or host', () => {
    assert.equal(n('acme'), 'acme');
    assert.equal(n('  Acme-Help '), 'acme-help');
    assert.equal(n('acme.zendesk.com'), 'acme');
    assert.equal(n('ACME.ZENDESK.COM.'), 'acme');
    assert.equal(n('1234'), '1234');
  });

  it('refuses anything that is not a plain name or a zendesk.com host', () => {
    for (const bad of [
      'https://acme.zendesk.com',
      'acme.zendesk.com/hc/en-us',
      'acme.zendesk.com:443',
      'user@acme.zendesk.com',
      '127.0.0.1',
      '[::1]',
      'acme.evil.test',
      'a.b.zendesk.com',
      '-acme',
      'ac me',
      '',
    ]) {
      throwsInvalid(() => n(bad), 'subdomain');
    }
  });

  it('takes e-mail and API token together or not at all, naming what is missing; an access token alone', () => {
    const { email, api_token } = ZENDESK_GOOD;
    throwsInvalid(() => supportDeskConnector.normalize({ subdomain: 'acme', email }), 'api_token');
    throwsInvalid(() => supportDeskConnector.normalize({ subdomain: 'acme', api_token }), 'email');
    throwsInvalid(
      () => supportDeskConnector.normalize({ subdomain: 'acme', access_token: 'two words' }),
      'access_token',
    );
    assert.deepEqual(supportDeskConnector.normalize({ subdomain: 'acme', access_token: ' tok_1 ' }), {
      subdomain: 'acme',
      access_token: 'tok_1',
      include_tickets: false,
    });
    // The seed's input keeps working as it did, the ticket option stored beside it.
    assert.deepEqual(supportDeskConnector.normalize(good), { ...good, include_tickets: false });
    // Neither: the OAuth consent fills access_token after normalizing (zendeskOAuth.needsConsent).
    assert.deepEqual(supportDeskConnector.normalize({ subdomain: 'acme' }), {
      subdomain: 'acme',
      include_tickets: false,
    });
  });

  it('without any token the check answers oauth_required and asks Zendesk nothing', async () => {
    const fake = await startFakeZendesk();
    try {
      const err = await rejectsWithCode(
        runCheck(supportDeskConnector, { subdomain: 'acme' }, fake.url),
        'oauth_required',
      );
      assert.match(err.message, /source\.email and source\.api_token, or connect through OAuth/);
      assert.equal(fake.requests.length, 0);
    } finally {
      await fake.close();
    }
  });

  it('include_tickets is an optional boolean of the input, false unless given', () => {
    const schema = supportDeskConnector.credentials;
    assert.equal(schema.safeParse({ ...good, include_tickets: true }).success, true);
    assert.equal(schema.safeParse({ ...good, include_tickets: 'yes' }).success, false);
    assert.equal(schema.safeParse({ subdomain: 'acme', access_token: 'tok' }).success, true);
    assert.equal(schema.safeParse({ ...good, api_token: '' }).success, false);
    assert.equal(supportDeskConnector.normalize({ ...good, include_tickets: true }).include_tickets, true);
    assert.equal(supportDeskConnector.normalize({ ...good, include_tickets: false }).include_tickets, false);
    assert.equal(supportDeskConnector.normalize(good).include_tickets, false);
  });

  it('requires an e-mail that looks like one and a non-empty token', () => {
    throwsInvalid(() => supportDeskConnector.normalize({ ...good, email: 'not-an-email' }), 'email');
    throwsInvalid(() => supportDeskConnector.normalize({ ...good, api_token: '   ' }), 'api_token');
    throwsInvalid(() => supportDeskConnector.normalize({ ...good, api_token: 'two words' }), 'api_token');
    assert.equal(
      supportDeskConnector.normalize({ ...good, email: ' agent@acme.test ' }).email,
      'agent@acme.test',
    );
  });
});

describe('KB_SUPPORT_DESK_LISTING_HOURS', () => {
  it('takes whole hours (0: list on every sync), 24 by default, and refuses anything else at start', () => {
    const hours = (env: Record<string, string>) =>
      loadConfig(env).sources['support_desk']?.settings['listingHours'];
    assert.equal(hours({}), '24');
    assert.equal(hours({ KB_SUPPORT_DESK_LISTING_HOURS: '0' }), '0');
    assert.equal(hours({ KB_SUPPORT_DESK_LISTING_HOURS: '168' }), '168');
    for (const value of ['1.5', '-1', 'daily', '24h']) {
      assert.throws(
        () => loadConfig({ KB_SUPPORT_DESK_LISTING_HOURS: value }),
        (err: unknown) => err instanceof ConfigError && err.message.includes('KB_SUPPORT_DESK_LISTING_HOURS'),
        value,
      );
    }
  });
});
