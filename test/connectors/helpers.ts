/** Shared helpers of the connector tests. */
import assert from 'node:assert/strict';
import { checkCredentials } from '../../src/connectors/context.ts';
import type { SourceHttpClientOptions } from '../../src/connectors/http.ts';
import type { AnyConnector } from '../../src/connectors/types.ts';
import { AppError } from '../../src/lib/errors.ts';
import { plainFetch } from '../support/plain-fetch.ts';

/** Retry settings that keep tests fast; waits are recorded in `delays` instead of slept. */
export function fastHttp(delays: number[] = []): Omit<SourceHttpClientOptions, 'fetch' | 'signal'> {
  return {
    maxAttempts: 3,
    baseDelayMs: 1,
    maxDelayMs: 4,
    maxWaitMs: 60_000,
    attemptTimeoutMs: 5_000,
    sleep: async (ms) => {
      delays.push(ms);
    },
  };
}

/** Normalizes `input` with the connector and runs its credential check against `baseUrlTemplate`. */
export async function runCheck(
  connector: AnyConnector,
  input: Record<string, unknown>,
  baseUrlTemplate: string,
  delays: number[] = [],
): Promise<void> {
  await checkCredentials({
    connector,
    credentials: connector.normalize(input),
    fetch: plainFetch,
    baseUrlTemplate,
    http: fastHttp(delays),
  });
}

/** Asserts that `promise` rejects with an AppError of `code`, and returns it for more checks. */
export async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<AppError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof AppError, `expected an AppError(${code}), got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

/** Asserts that `fn` throws AppError('invalid_request') naming `field`. */
export function throwsInvalid(fn: () => unknown, field: string): AppError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof AppError, `expected invalid_request for ${field}, got ${String(caught)}`);
  assert.equal(caught.code, 'invalid_request');
  assert.match(caught.message, new RegExp(`source\\.${field}\\b`));
  return caught;
}
