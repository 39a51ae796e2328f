/**
 * The pure parts of outbound webhooks: the Standard Webhooks signature (the specification's published
 * test vector: standard-webhooks, libraries/javascript/src/webhook.test.ts "sign function works"), its
 * verification (wrong secret, stale timestamp, several signatures), and the retry schedule.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDelivered, WEBHOOK_RETRY_DELAYS_MS, webhookRetryDelayMs } from '../../src/jobs/webhook-retry.ts';
import { newWebhookSecret, signWebhook, verifyWebhookSignature } from '../../src/lib/webhook-signature.ts';

const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

test('signatures match the specification test vector', () => {
  assert.equal(signWebhook(VECTOR), VECTOR.signature);
  // The secret without its prefix signs the same (the specification's libraries accept both).
  assert.equal(signWebhook({ ...VECTOR, secret: VECTOR.secret.slice(6) }), VECTOR.signature);
});

test('verification: the vector passes; a wrong secret, a changed body or a stale timestamp fail', () => {
  const headers = { id: VECTOR.id, timestamp: String(VECTOR.timestamp), signature: VECTOR.signature };
  const ok = { secret: VECTOR.secret, headers, body: VECTOR.body, nowSeconds: VECTOR.timestamp + 10 };
  assert.equal(verifyWebhookSignature(ok), true);
  assert.equal(verifyWebhookSignature({ ...ok, secret: newWebhookSecret() }), false);
  assert.equal(verifyWebhookSignature({ ...ok, body: '{"test": 2432232315}' }), false);
  assert.equal(verifyWebhookSignature({ ...ok, nowSeconds: VECTOR.timestamp + 301 }), false);
  assert.equal(verifyWebhookSignature({ ...ok, headers: { ...headers, timestamp: 'soon' } }), false);
  const several = `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,x ${VECTOR.signature}`;
  assert.equal(verifyWebhookSignature({ ...ok, headers: { ...headers, signature: several } }), true);
  assert.equal(verifyWebhookSignature({ ...ok, headers: { ...headers, signature: 'v1,' } }), false);
});

test('a new secret is whsec_ and 32 random bytes', () => {
  const secret = newWebhookSecret();
  assert.match(secret, /^whsec_/);
  assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
  assert.notEqual(secret, newWebhookSecret());
});

test('retries follow the published schedule for about a day, then the delivery is given up', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7].map((n) => webhookRetryDelayMs(n)),
    [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
  );
  assert.equal(webhookRetryDelayMs(8), null);
  const total = WEBHOOK_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
  assert.ok(total > 24 * 3_600_000 && total < 30 * 3_600_000);
  assert.equal(webhookRetryDelayMs(2, [10, 20]), 20);
  assert.equal(webhookRetryDelayMs(3, [10, 20]), null);
  assert.ok(isDelivered(200) && isDelivered(204));
  assert.ok(!isDelivered(301) && !isDelivered(410) && !isDelivered(500));
});
