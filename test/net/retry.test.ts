import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideRetry,
  isRetryableStatus,
  parseResetValue,
  parseRetryAfter,
  type AttemptResult,
  type RetryInput,
  type RetryNotice,
  retrying,
} from '../../src/net/retry.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const base: RetryInput = {
  status: 429,
  attempt: 1,
  maxAttempts: 5,
  now: NOW,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  random: 0.5,
};

describe('decideRetry', () => {
  it('does not retry successes and client errors other than 408/429', () => {
    for (const status of [200, 204, 301, 400, 401, 403, 404, 409, 422, 501, 505]) {
      assert.deepEqual(
        decideRetry({ ...base, status }),
        { retry: false, reason: 'not_retryable' },
        String(status),
      );
    }
  });

  it('retries 408, 429, 5xx (Notion 529 included) and network errors', () => {
    for (const status of [408, 429, 500, 502, 503, 504, 529, undefined]) {
      assert.equal(isRetryableStatus(status), true, String(status));
      assert.equal(decideRetry({ ...base, status }).retry, true, String(status));
    }
  });

  it('honours Retry-After in seconds, fractional seconds and HTTP dates', () => {
    assert.deepEqual(decideRetry({ ...base, headers: { 'Retry-After': '2' } }), {
      retry: true,
      delayMs: 2000,
      basis: 'retry-after',
    });
    assert.deepEqual(decideRetry({ ...base, headers: { 'retry-after': '2.0' } }), {
      retry: true,
      delayMs: 2000,
      basis: 'retry-after',
    });
    assert.deepEqual(decideRetry({ ...base, headers: { 'retry-after': '0.25' } }), {
      retry: true,
      delayMs: 250,
      basis: 'retry-after',
    });
    const date = new Date(NOW + 7_000).toUTCString();
    assert.deepEqual(decideRetry({ ...base, headers: new Headers({ 'retry-after': date }) }), {
      retry: true,
      delayMs: 7000,
      basis: 'retry-after',
    });
    // A date in the past means "now".
    const past = new Date(NOW - 60_000).toUTCString();
    assert.deepEqual(decideRetry({ ...base, headers: { 'retry-after': past } }), {
      retry: true,
      delayMs: 0,
      basis: 'retry-after',
    });
  });

  it('honours Retry-After on 503 too', () => {
    assert.deepEqual(decideRetry({ ...base, status: 503, headers: { 'retry-after': '4' } }), {
      retry: true,
      delayMs: 4000,
      basis: 'retry-after',
    });
  });

  it('reads reset headers on 429: GitBook epoch seconds, Confluence ISO time, Zendesk/IETF delta seconds', () => {
    const gitbook = { 'x-ratelimit-reset': String(NOW / 1000 + 12) };
    assert.deepEqual(decideRetry({ ...base, headers: gitbook }), {
      retry: true,
      delayMs: 12_000,
      basis: 'rate-limit-reset',
    });
    const confluence = { 'X-RateLimit-Reset': '2026-11-22T12:01Z' };
    assert.deepEqual(decideRetry({ ...base, headers: confluence }), {
      retry: true,
      delayMs: 60_000,
      basis: 'rate-limit-reset',
    });
    const ietf = { 'ratelimit-reset': '41' };
    assert.deepEqual(decideRetry({ ...base, headers: ietf }), {
      retry: true,
      delayMs: 41_000,
      basis: 'rate-limit-reset',
    });
    const zendesk = { 'zendesk-ratelimit-tickets-index': 'total=100; remaining=0; resets=9' };
    assert.deepEqual(decideRetry({ ...base, headers: zendesk }), {
      retry: true,
      delayMs: 9_000,
      basis: 'rate-limit-reset',
    });
    const epochMs = { 'x-ratelimit-reset': String(NOW + 3_000) };
    assert.deepEqual(decideRetry({ ...base, headers: epochMs }), {
      retry: true,
      delayMs: 3_000,
      basis: 'rate-limit-reset',
    });
  });

  it('prefers Retry-After over reset headers', () => {
    const headers = { 'retry-after': '1', 'x-ratelimit-reset': String(NOW / 1000 + 50) };
    assert.deepEqual(decideRetry({ ...base, headers }), { retry: true, delayMs: 1000, basis: 'retry-after' });
  });

  it('ignores reset headers on 5xx and resets in the past (clock skew): backoff instead', () => {
    const past = { 'x-ratelimit-reset': String(NOW / 1000 - 5) };
    assert.equal((decideRetry({ ...base, headers: past }) as { basis: string }).basis, 'backoff');
    const future = { 'x-ratelimit-reset': String(NOW / 1000 + 5) };
    assert.equal(
      (decideRetry({ ...base, status: 502, headers: future }) as { basis: string }).basis,
      'backoff',
    );
  });

  it('backs off exponentially with equal jitter, capped at maxDelayMs', () => {
    const delay = (attempt: number, random: number) => {
      const d = decideRetry({ ...base, status: 503, attempt, maxAttempts: 20, random });
      assert.ok(d.retry);
      return d.delayMs;
    };
    assert.equal(delay(1, 0), 250);
    assert.equal(delay(1, 0.999999), 500);
    assert.equal(delay(2, 0), 500);
    assert.equal(delay(3, 0), 1000);
    assert.equal(delay(4, 0.5), 3000);
    for (let attempt = 1; attempt < 20; attempt++) {
      for (const r of [0, 0.3, 0.99]) {
        const d = delay(attempt, r);
        assert.ok(d <= 30_000 && d >= 0, `attempt ${attempt}: ${d}`);
      }
    }
    assert.equal(delay(15, 0), 15_000);
    assert.equal(delay(15, 0.999999), 30_000);
  });

  it('gives up after maxAttempts, reporting what the source asked for', () => {
    assert.deepEqual(decideRetry({ ...base, status: 503, attempt: 5 }), {
      retry: false,
      reason: 'attempts_exhausted',
    });
    assert.deepEqual(decideRetry({ ...base, status: undefined, attempt: 5 }), {
      retry: false,
      reason: 'attempts_exhausted',
    });
    assert.deepEqual(decideRetry({ ...base, attempt: 5, headers: { 'retry-after': '3' } }), {
      retry: false,
      reason: 'attempts_exhausted',
      retryAfterMs: 3000,
    });
  });

  it('gives up at once when the source demands a wait longer than maxWaitMs', () => {
    assert.deepEqual(decideRetry({ ...base, maxWaitMs: 10_000, headers: { 'retry-after': '3600' } }), {
      retry: false,
      reason: 'wait_too_long',
      retryAfterMs: 3_600_000,
    });
  });

  it('ignores garbage headers', () => {
    const d = decideRetry({ ...base, headers: { 'retry-after': 'soon', 'x-ratelimit-reset': 'later' } });
    assert.ok(d.retry);
    assert.equal(d.basis, 'backoff');
  });

  it('is pure: same input, same output', () => {
    const input = { ...base, status: 500, attempt: 3, random: 0.42 };
    assert.deepEqual(decideRetry(input), decideRetry(input));
  });
});

describe('header parsers', () => {
  it('parseRetryAfter', () => {
    assert.equal(parseRetryAfter(undefined, NOW), undefined);
    assert.equal(parseRetryAfter(' 5 ', NOW), 5000);
    assert.equal(parseRetryAfter('nonsense', NOW), undefined);
  });

  it('parseResetValue', () => {
    assert.equal(parseResetValue('30', NOW), 30_000);
    assert.equal(parseResetValue(String(NOW / 1000 + 30), NOW), 30_000);
    assert.equal(parseResetValue('2026-11-22T12:00:30Z', NOW), 30_000);
    assert.equal(parseResetValue('x', NOW), undefined);
  });
});

describe('retrying', () => {
  /** Answers the scripted results in order and records every wait instead of sleeping. */
  function script(results: AttemptResult<string>[]) {
    const waits: number[] = [];
    const notices: RetryNotice[] = [];
    let calls = 0;
    const attempt = async (n: number) => {
      calls++;
      assert.equal(n, calls, 'attempts are numbered from 1');
      const next = results.shift();
      assert.ok(next, 'no attempt after the loop should have stopped');
      return next;
    };
    const opts = {
      maxAttempts: 4,
      baseDelayMs: 100,
      maxDelayMs: 1_000,
      maxWaitMs: 5_000,
      now: () => NOW,
      random: () => 0.5,
      sleep: async (ms: number) => void waits.push(ms),
      onRetry: (notice: RetryNotice) => void notices.push(notice),
    };
    return { attempt, opts, waits, notices, calls: () => calls };
  }
  const reply = (status: number, headers?: Record<string, string>): AttemptResult<string> =>
    headers ? { response: `HTTP ${status}`, status, headers } : { response: `HTTP ${status}`, status };

  it('retries 503 and transport failures with backoff, then answers the success', async () => {
    const s = script([reply(503), { error: new Error('ECONNRESET'), retryable: true }, reply(200)]);
    const outcome = await retrying(s.attempt, s.opts);
    assert.deepEqual(outcome, {
      response: 'HTTP 200',
      attempts: 3,
      stop: { retry: false, reason: 'not_retryable' },
    });
    assert.deepEqual(s.waits, [75, 150]);
    assert.deepEqual(s.notices, [
      { attempt: 1, status: 503, delayMs: 75, basis: 'backoff' },
      { attempt: 2, status: undefined, delayMs: 150, basis: 'backoff' },
    ]);
  });

  it('waits what Retry-After asks, and gives up at once when it asks for more than maxWaitMs', async () => {
    const s = script([reply(429, { 'retry-after': '2' }), reply(429, { 'retry-after': '60' })]);
    const outcome = await retrying(s.attempt, s.opts);
    assert.deepEqual(outcome, {
      response: 'HTTP 429',
      attempts: 2,
      stop: { retry: false, reason: 'wait_too_long', retryAfterMs: 60_000 },
    });
    assert.deepEqual(s.waits, [2000]);
  });

  it('answers the last failure when the attempts run out', async () => {
    const err = new Error('timed out');
    const s = script(Array.from({ length: 4 }, () => ({ error: err, retryable: true })));
    const outcome = await retrying(s.attempt, s.opts);
    assert.deepEqual(outcome, {
      error: err,
      attempts: 4,
      stop: { retry: false, reason: 'attempts_exhausted' },
    });
    assert.equal(s.waits.length, 3);
  });

  it('stops at once on a failure marked not retryable, and on a status that waiting cannot change', async () => {
    const blocked = new Error('refused: private address');
    const first = script([{ error: blocked, retryable: false }]);
    assert.deepEqual(await retrying(first.attempt, first.opts), {
      error: blocked,
      attempts: 1,
      stop: { retry: false, reason: 'not_retryable' },
    });
    const second = script([reply(404)]);
    assert.equal(
      ((await retrying(second.attempt, second.opts)) as { response: string }).response,
      'HTTP 404',
    );
    assert.deepEqual([...first.waits, ...second.waits], []);
  });

  it('lets what an attempt throws through, without another attempt', async () => {
    const s = script([]);
    await assert.rejects(
      retrying(async () => {
        throw new Error('body too large');
      }, s.opts),
      /body too large/,
    );
  });

  it('stops waiting when the signal fires, rejecting with its reason, and makes no further attempt', async () => {
    const controller = new AbortController();
    let calls = 0;
    setTimeout(() => controller.abort(new Error('cancelled by disconnect')), 50);
    // The source asks for an hour's wait: only the signal can end this within the test's time.
    await assert.rejects(
      retrying(
        async () => {
          calls++;
          return reply(503, { 'retry-after': '3600' });
        },
        { maxAttempts: 5, maxWaitMs: 7_200_000, signal: controller.signal },
      ),
      /cancelled by disconnect/,
    );
    assert.equal(calls, 1);
  });
});
