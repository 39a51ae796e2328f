/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, symmetric scheme): the secret is
 * `whsec_` + base64 of random bytes; `webhook-signature` is `v1,` + base64 of HMAC-SHA256, keyed with the
 * secret's decoded bytes, over `<webhook-id>.<webhook-timestamp>.<body>`. Receivers can check ours with
 * any Standard Webhooks library; `verifyWebhookSignature` is the same check, for tests and docs.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes (the specification asks for 24 to 64). */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function secretBytes(secret: string): Buffer {
  const raw = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(raw, 'base64');
}

/** The `webhook-signature` header value of one message. */
export function signWebhook(opts: { secret: string; id: string; timestamp: number; body: string }): string {
  const mac = createHmac('sha256', secretBytes(opts.secret))
    .update(`${opts.id}.${opts.timestamp}.${opts.body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * Whether the headers prove the body: one of the space-separated `v1,` signatures matches (compared in
 * constant time) and the timestamp is within `toleranceSeconds` of `nowSeconds` (replays of old messages
 * fail). Default tolerance five minutes, as the specification's libraries use.
 */
export function verifyWebhookSignature(opts: {
  secret: string;
  headers: { id: string; timestamp: string; signature: string };
  body: string;
  nowSeconds: number;
  toleranceSeconds?: number;
}): boolean {
  const timestamp = Number(opts.headers.timestamp);
  if (!/^\d+$/.test(opts.headers.timestamp) || !Number.isSafeInteger(timestamp)) return false;
  if (Math.abs(opts.nowSeconds - timestamp) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(
    signWebhook({ secret: opts.secret, id: opts.headers.id, timestamp, body: opts.body }).slice(3),
    'base64',
  );
  return opts.headers.signature.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
