/**
 * The decisions behind a crawl's pace, as pure functions: the back-off a host's answers call for
 * (backoff.ts) and the pace a crawl gets on a host within the operator's bounds (settings.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type HostAnswer,
  type HostBackoff,
  NO_BACKOFF,
  nextBackoff,
  THROTTLED_GAP_MS,
} from '../../src/crawler/backoff.ts';
import { defaultCrawlerSettings, isFastHost, paceBounds, paceFor } from '../../src/crawler/settings.ts';

const MAX = { maxGapMs: 30_000 };

function after(answers: HostAnswer[], from: HostBackoff = NO_BACKOFF): HostBackoff {
  return answers.reduce((state, a) => nextBackoff(state, a, MAX), from);
}

const ok = (latencyMs: number): HostAnswer => ({ status: 200, latencyMs });

describe('adaptive back-off', () => {
  test('a 429 or 503 opens a gap that doubles with each one, up to the cap', () => {
    const once = after([ok(5), { status: 429, latencyMs: 5 }]);
    assert.equal(once.gapMs, THROTTLED_GAP_MS);
    const twice = nextBackoff(once, { status: 503, latencyMs: 5 }, MAX);
    assert.equal(twice.gapMs, 2 * THROTTLED_GAP_MS);
    let state = twice;
    for (let i = 0; i < 20; i++) state = nextBackoff(state, { status: 429, latencyMs: 5 }, MAX);
    assert.equal(state.gapMs, MAX.maxGapMs);
  });

  test('the gap narrows answer by answer once the host answers well again, and closes', () => {
    let state = after([ok(5), { status: 429, latencyMs: 5 }]);
    const gaps = [];
    for (let i = 0; i < 30 && state.gapMs > 0; i++) {
      state = nextBackoff(state, ok(5), MAX);
      gaps.push(state.gapMs);
    }
    assert.ok(gaps[0]! < THROTTLED_GAP_MS && gaps[0]! > THROTTLED_GAP_MS / 2, `first step ${gaps[0]}`);
    for (let i = 1; i < gaps.length; i++) assert.ok(gaps[i]! < gaps[i - 1]!, gaps.join(' '));
    assert.equal(state.gapMs, 0, 'closed after a run of good answers');
  });

  test('a host answering slower than at its best gets a gap of the time it now takes beyond it', () => {
    const fast = after(Array.from({ length: 10 }, () => ok(40)));
    assert.equal(fast.gapMs, 0);
    let state = fast;
    const gaps = [];
    for (let i = 0; i < 10; i++) {
      state = nextBackoff(state, ok(400), MAX);
      gaps.push(state.gapMs);
    }
    for (let i = 1; i < gaps.length; i++) assert.ok(gaps[i]! >= gaps[i - 1]!, `rising: ${gaps.join(' ')}`);
    assert.ok(state.gapMs > 250 && state.gapMs <= 360, `gap ${state.gapMs}`);
    assert.equal(state.baselineMs, 40, 'its best is remembered');
  });

  test('noise on a quick host is not slowness', () => {
    const state = after([ok(2), ok(6), ok(3), ok(9), ok(2), ok(12), ok(4)]);
    assert.equal(state.gapMs, 0);
  });

  test('a timeout counts as a slow answer', () => {
    const state = after([ok(30), ok(30), { status: null, latencyMs: 20_000 }]);
    assert.ok(state.gapMs > 1000, `gap ${state.gapMs}`);
  });
});

describe('pace per host', () => {
  const s = { ...defaultCrawlerSettings(), fastHosts: ['docs.example.com', '*.own.example'] };

  test('fast hosts: named, or under a *. entry; never a look-alike', () => {
    assert.ok(isFastHost('docs.example.com', s.fastHosts));
    assert.ok(isFastHost('DOCS.example.com.', s.fastHosts));
    assert.ok(isFastHost('a.b.own.example', s.fastHosts));
    assert.ok(!isFastHost('own.example', s.fastHosts), '*. names subdomains only');
    assert.ok(!isFastHost('evilown.example', s.fastHosts));
    assert.ok(!isFastHost('docs.example.com.evil.test', s.fastHosts));
  });

  test("a crawl that does not ask gets the host's default; one that asks gets it within the bounds", () => {
    assert.deepEqual(paceFor('example.org', {}, s), { concurrency: 2, delayMs: 100 });
    assert.deepEqual(paceFor('docs.example.com', {}, s), { concurrency: 8, delayMs: 0 });
    assert.deepEqual(paceFor('example.org', { maxConcurrency: 3, delayMs: 250 }, s), {
      concurrency: 3,
      delayMs: 250,
    });
    // Settings narrowed after the crawl was queued: the crawl is held to them.
    assert.deepEqual(paceFor('example.org', { maxConcurrency: 8, delayMs: 0 }, s), {
      concurrency: 4,
      delayMs: 50,
    });
    assert.deepEqual(paceFor('docs.example.com', { maxConcurrency: 1, delayMs: 500 }, s), {
      concurrency: 1,
      delayMs: 500,
    });
  });

  test('bounds: fast hosts have their own, and defaults are always within them', () => {
    assert.deepEqual(paceBounds('example.org', s), {
      fast: false,
      maxConcurrency: 4,
      minDelayMs: 50,
      maxDelayMs: 30_000,
      defaults: { concurrency: 2, delayMs: 100 },
    });
    assert.equal(paceBounds('x.own.example', s).maxConcurrency, 8);
    const odd = { ...s, perHostConcurrency: 6, minDelayMs: 10 };
    assert.equal(paceBounds('example.org', odd).maxConcurrency, 6);
    assert.equal(paceBounds('example.org', odd).minDelayMs, 10);
  });
});
