import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NOTION_VERSION, notesConnector } from '../../src/connectors/notes/index.ts';
import { closedPortUrl, type FakeServer } from '../fakes/fake-server.ts';
import { NOTION_GOOD_TOKEN, startFakeNotion } from '../fakes/notion.ts';
import { rejectsWithCode, runCheck, throwsInvalid } from './helpers.ts';

describe('notes (Notion) credential check', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeNotion();
  });
  after(() => fake.close());

  it('accepts a good token with GET /v1/users/me, Bearer and Notion-Version', async () => {
    const before = fake.requests.length;
    await runCheck(notesConnector, { access_token: NOTION_GOOD_TOKEN }, fake.url);
    const sent = fake.requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.path, '/v1/users/me');
    assert.equal(sent[0]!.headers.authorization, `Bearer ${NOTION_GOOD_TOKEN}`);
    assert.equal(sent[0]!.headers['notion-version'], NOTION_VERSION);
  });

  it('rejects a bad token as source_auth_failed with Notion’s message', async () => {
    const err = await rejectsWithCode(
      runCheck(notesConnector, { access_token: 'ntn_wrong_token_value' }, fake.url),
      'source_auth_failed',
    );
    assert.match(err.message, /Notion \(notes\)/);
    assert.match(err.message, /HTTP 401: API token is invalid/);
    assert.doesNotMatch(err.message, /ntn_wrong_token_value/);
  });

  it('asks for OAuth when there is no token yet', async () => {
    await rejectsWithCode(runCheck(notesConnector, {}, fake.url), 'oauth_required');
  });

  it('waits out a 429 with Retry-After, then succeeds', async () => {
    fake.rateLimitNext(2, 1);
    const delays: number[] = [];
    await runCheck(notesConnector, { access_token: NOTION_GOOD_TOKEN }, fake.url, delays);
    assert.deepEqual(delays, [1000, 1000]);
  });

  it('answers source_unreachable when nothing listens', async () => {
    await rejectsWithCode(
      runCheck(notesConnector, { access_token: NOTION_GOOD_TOKEN }, await closedPortUrl()),
      'source_unreachable',
    );
  });

  it('answers source_unreachable for an answer that is not the Notion API', async () => {
    fake.failNext(1, { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>parked</html>' });
    const err = await rejectsWithCode(
      runCheck(notesConnector, { access_token: NOTION_GOOD_TOKEN }, fake.url),
      'source_unreachable',
    );
    assert.match(err.message, /not like the Notion API/);
  });
});

describe('notes normalize', () => {
  it('accepts no token (OAuth supplies it) or a non-empty one', () => {
    assert.deepEqual(notesConnector.normalize({}), {});
    assert.deepEqual(notesConnector.normalize({ access_token: ' secret_abc ' }), {
      access_token: 'secret_abc',
    });
    throwsInvalid(() => notesConnector.normalize({ access_token: '' }), 'access_token');
  });
});
