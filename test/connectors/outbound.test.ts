/** The connector layer over the real guarded fetch of src/net/outbound.ts (not the test adapter). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkCredentials } from '../../src/connectors/context.ts';
import { createSourceHttpClient } from '../../src/connectors/http.ts';
import { supportDeskConnector } from '../../src/connectors/support-desk/index.ts';
import { createOutboundFetch, OutboundBlockedError } from '../../src/net/outbound.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startFakeZendesk, ZENDESK_GOOD } from '../fakes/zendesk.ts';
import { fastHttp, rejectsWithCode } from './helpers.ts';

const creds = { subdomain: 'acme', ...ZENDESK_GOOD };

describe('connectors over the guarded outbound fetch', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeZendesk();
  });
  after(() => fake.close());

  it('checks credentials and retries a 429 when private addresses are allowed (tests, intranets)', async () => {
    const fetch = createOutboundFetch({ allowPrivate: true, userAgent: 'kb-test' });
    fake.rateLimitNext(1, 1);
    const delays: number[] = [];
    await checkCredentials({
      connector: supportDeskConnector,
      credentials: creds,
      fetch,
      baseUrlTemplate: fake.url,
      http: fastHttp(delays),
    });
    assert.deepEqual(delays, [1000]);
  });

  it('is refused by the guard, without retries, when private addresses are not allowed', async () => {
    const fetch = createOutboundFetch({ allowPrivate: false, userAgent: 'kb-test' });
    const before = fake.requests.length;
    const http = createSourceHttpClient({ fetch, ...fastHttp() });
    await assert.rejects(http.request('GET', `${fake.url}/api/v2/users/me.json`), OutboundBlockedError);
    assert.equal(http.requestCount, 1);

    const err = await rejectsWithCode(
      checkCredentials({
        connector: supportDeskConnector,
        credentials: creds,
        fetch,
        baseUrlTemplate: fake.url,
        http: fastHttp(),
      }),
      'source_unreachable',
    );
    assert.match(err.message, /Zendesk \(support_desk\) could not be reached: refused/);
    assert.equal(fake.requests.length, before, 'nothing reached the server');
  });
});
