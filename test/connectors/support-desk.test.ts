import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { supportDeskConnector } from '../../src/connectors/support-desk/index.ts';
import { closedPortUrl, type FakeServer } from '../fakes/fake-server.ts';
import { startFakeZendesk, ZENDESK_GOOD } from '../fakes/zendesk.ts';
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
