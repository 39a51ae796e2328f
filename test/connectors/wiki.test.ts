import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkCredentials } from '../../src/connectors/context.ts';
import { wikiConnector } from '../../src/connectors/wiki/index.ts';
import { CONFLUENCE_GOOD, type FakeConfluence, startFakeConfluence } from '../fakes/confluence.ts';
import { closedPortUrl } from '../fakes/fake-server.ts';
import { plainFetch } from '../support/plain-fetch.ts';
import { fastHttp, rejectsWithCode, throwsInvalid } from './helpers.ts';

const good = { domain_name: 'acme', ...CONFLUENCE_GOOD };

describe('wiki (Confluence) credential check', () => {
  let fake: FakeConfluence;
  before(async () => {
    fake = await startFakeConfluence();
  });
  after(() => fake.close());

  /** The check against `baseUrlTemplate`, the gateway being the fake's (a refused token is tried there). */
  const check = async (input: typeof good, baseUrlTemplate: string, delays: number[] = []) => {
    await checkCredentials({
      connector: wikiConnector,
      credentials: wikiConnector.normalize(input),
      fetch: plainFetch,
      baseUrlTemplate,
      settings: { gatewayBaseUrl: fake.gateway.url },
      http: fastHttp(delays),
    });
  };

  it('accepts good credentials with Basic email:token on GET /wiki/rest/api/user/current', async () => {
    const before = fake.requests.length;
    await check(good, fake.url);
    const sent = fake.requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.path, '/wiki/rest/api/user/current');
    const expected = Buffer.from(`${good.email}:${good.api_token}`).toString('base64');
    assert.equal(sent[0]!.headers.authorization, `Basic ${expected}`);
  });

  it('fills {domain_name} of an operator base-URL template', async () => {
    const before = fake.requests.length;
    await check(good, `${fake.url}/{domain_name}`);
    assert.equal(fake.requests[before]!.path, '/acme.atlassian.net/wiki/rest/api/user/current');
  });

  it('rejects a wrong token as source_auth_failed with the errors[] title', async () => {
    const err = await rejectsWithCode(
      check({ ...good, api_token: 'ATATT_wrong' }, fake.url),
      'source_auth_failed',
    );
    assert.match(err.message, /Confluence \(wiki\).*HTTP 401: Unauthorized/);
    assert.doesNotMatch(err.message, /ATATT_wrong/);
    // Refused on the site, then tried as a scoped token through the gateway of the site's cloud id.
    assert.deepEqual(
      fake.gateway.requests.map((r) => r.path.replace(/\/ex\/confluence\/[^/]+/, '')),
      ['/wiki/api/v2/spaces'],
    );
  });

  it('treats the anonymous user as rejected credentials', async () => {
    fake.failNext(1, { status: 200, body: { type: 'anonymous', displayName: 'Anonymous' } });
    const err = await rejectsWithCode(check(good, fake.url), 'source_auth_failed');
    assert.match(err.message, /anonymous/);
  });

  it('honours Retry-After on 429, then succeeds', async () => {
    fake.rateLimitNext(1, 3);
    const delays: number[] = [];
    await check(good, fake.url, delays);
    assert.deepEqual(delays, [3000]);
  });

  it('answers source_unreachable when nothing listens', async () => {
    await rejectsWithCode(check(good, await closedPortUrl()), 'source_unreachable');
  });
});

describe('wiki normalize', () => {
  const n = (domain_name: string) => wikiConnector.normalize({ ...good, domain_name }).domain_name;

  it('turns a bare name into <name>.atlassian.net and keeps full hosts, custom domains included', () => {
    assert.equal(n('acme'), 'acme.atlassian.net');
    assert.equal(n('Acme.Atlassian.net'), 'acme.atlassian.net');
    assert.equal(n('wiki.acme.com.'), 'wiki.acme.com');
    assert.equal(n('1234'), '1234.atlassian.net');
    assert.equal(n('wiki.bücher.de'), 'wiki.xn--bcher-kva.de');
  });

  it('refuses scheme, path, port, user info and IP literals', () => {
    for (const bad of [
      'https://acme.atlassian.net',
      '//acme.atlassian.net',
      'acme.atlassian.net/wiki',
      'acme.atlassian.net?x=1',
      'acme.atlassian.net:8443',
      'me@acme.atlassian.net',
      '10.0.0.1',
      '169.254.169.254',
      '[fd00::1]',
      '::1',
      '127.1',
      '0x7f.1',
      'bad_host.example.com',
      'a..b',
      '',
    ]) {
      throwsInvalid(() => n(bad), 'domain_name');
    }
  });
});
