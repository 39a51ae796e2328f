import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { docsSpaceConnector } from '../../src/connectors/docs-space/index.ts';
import { closedPortUrl, type FakeServer } from '../fakes/fake-server.ts';
import { GITBOOK_GOOD_TOKEN, GITBOOK_SPACE_ID, startFakeGitbook } from '../fakes/gitbook.ts';
import { rejectsWithCode, runCheck, throwsInvalid } from './helpers.ts';

const good = { access_token: GITBOOK_GOOD_TOKEN, space_id: GITBOOK_SPACE_ID };

describe('docs_space (GitBook) credential check', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeGitbook();
  });
  after(() => fake.close());

  it('accepts a good token and space with GET /v1/spaces/{space_id} and Bearer auth', async () => {
    const before = fake.requests.length;
    await runCheck(docsSpaceConnector, good, fake.url);
    const sent = fake.requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.path, `/v1/spaces/${GITBOOK_SPACE_ID}`);
    assert.equal(sent[0]!.headers.authorization, `Bearer ${GITBOOK_GOOD_TOKEN}`);
  });

  it('rejects a bad token as source_auth_failed with GitBook’s message', async () => {
    const err = await rejectsWithCode(
      runCheck(docsSpaceConnector, { ...good, access_token: 'gb_wrong_token' }, fake.url),
      'source_auth_failed',
    );
    assert.match(err.message, /GitBook \(docs_space\).*HTTP 401: You must be authenticated/);
    assert.doesNotMatch(err.message, /gb_wrong_token/);
  });

  it('rejects an unknown space as source_auth_failed naming space_id', async () => {
    const err = await rejectsWithCode(
      runCheck(docsSpaceConnector, { ...good, space_id: 'otherSpace123' }, fake.url),
      'source_auth_failed',
    );
    assert.match(err.message, /HTTP 404: Space not found/);
    assert.match(err.message, /source\.space_id/);
  });

  it('waits until X-RateLimit-Reset on a 429 without Retry-After', async () => {
    fake.rateLimitNext(1, 5);
    const delays: number[] = [];
    await runCheck(docsSpaceConnector, good, fake.url, delays);
    assert.equal(delays.length, 1);
    assert.ok(delays[0]! > 3_000 && delays[0]! <= 6_000, `waited ${delays[0]} ms`);
  });

  it('answers source_unreachable after repeated 503s and when nothing listens', async () => {
    fake.unavailableNext(3);
    await rejectsWithCode(runCheck(docsSpaceConnector, good, fake.url), 'source_unreachable');
    await rejectsWithCode(runCheck(docsSpaceConnector, good, await closedPortUrl()), 'source_unreachable');
  });
});

describe('docs_space normalize', () => {
  it('accepts GitBook ids and refuses anything that could change the request path', () => {
    assert.equal(docsSpaceConnector.normalize({ ...good, space_id: ' -MdRzZ3k_x ' }).space_id, '-MdRzZ3k_x');
    for (const bad of ['../orgs', 'a/b', 'a?b', 'a%2F', '', 'sp ace']) {
      throwsInvalid(() => docsSpaceConnector.normalize({ ...good, space_id: bad }), 'space_id');
    }
    throwsInvalid(() => docsSpaceConnector.normalize({ ...good, access_token: '' }), 'access_token');
  });
});
