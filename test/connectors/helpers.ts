/** Shared helpers of the connector tests. */
import assert from 'node:assert/strict';
import { checkCredentials, createConnectorContext } from '../../src/connectors/context.ts';
import type { SourceHttpClientOptions } from '../../src/connectors/http.ts';
import type { AnyConnector, KnownDocument, SourceDocument, SyncMode } from '../../src/connectors/types.ts';
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

/** What one connector sync yielded, sorted by kind, plus what it cost. */
export interface SyncOutcome<Cursor = unknown> {
  documents: SourceDocument[];
  deleted: Array<{ externalId: string; table?: string | undefined }>;
  failures: Array<{ externalId?: string | undefined; error: Error; retryable: boolean }>;
  checkpoints: Cursor[];
  /** The last checkpoint (the next sync's cursor), or the cursor it started from. */
  cursor: Cursor | null;
  requests: number;
  bytes: number;
}

/**
 * Holds what a connection would hold between syncs (documents by table and id, and the cursor), so a
 * connector test can run first, incremental and reset syncs in a row against a fake server without the
 * job engine. The job engine and the database are exercised by the end-to-end tests; this keeps each
 * connector's own logic (enumeration, rendering, change and deletion detection) fast to test.
 */
export class SyncedSet<Cursor = unknown> {
  /**
   * The held documents by `<table>:<externalId>`, as the runner keys them: ids are only unique per table.
   * Use {@link doc} / {@link has} to look one up by id.
   */
  readonly held = new Map<string, SourceDocument>();
  cursor: Cursor | null = null;

  readonly #connector: AnyConnector;
  readonly #input: Record<string, unknown>;
  readonly #baseUrl: string;
  readonly #http: Omit<SourceHttpClientOptions, 'fetch' | 'signal'>;
  /** The operator's values of the connector's settings (`KB_<TYPE>_...`); defaults fill the rest. */
  settings: Record<string, string> | undefined;

  /** `http` defaults to fast retries (waits recorded, not slept) and no request pacing. */
  constructor(
    connector: AnyConnector,
    input: Record<string, unknown>,
    baseUrl: string,
    http: Omit<SourceHttpClientOptions, 'fetch' | 'signal'> = { ...fastHttp(), requestsPerSecond: 100_000 },
  ) {
    this.#connector = connector;
    this.#input = input;
    this.#baseUrl = baseUrl;
    this.#http = http;
  }

  /** One sync pass; applies documents and deletions as the runner would (a full pass sweeps the rest). */
  async sync(
    mode: SyncMode = 'incremental',
    opts: { signal?: AbortSignal } = {},
  ): Promise<SyncOutcome<Cursor>> {
    const ctx = createConnectorContext({
      connector: this.#connector,
      credentials: this.#connector.normalize(this.#input),
      fetch: plainFetch,
      signal: opts.signal ?? new AbortController().signal,
      baseUrlTemplate: this.#baseUrl,
      http: this.#http,
      settings: this.settings,
    });
    const known = this.knownBatches.bind(this);
    const out: SyncOutcome<Cursor> = {
      documents: [],
      deleted: [],
      failures: [],
      checkpoints: [],
      cursor: mode === 'full' ? null : this.cursor,
      requests: 0,
      bytes: 0,
    };
    const seen = new Set<string>();
    const failedIds = new Set<string>();
    for await (const event of this.#connector.sync!(ctx, { cursor: out.cursor, mode, known })) {
      if (event.kind === 'document') {
        out.documents.push(event.doc);
        const key = heldKey(event.doc.table, event.doc.externalId);
        this.held.set(key, event.doc);
        seen.add(key);
      } else if (event.kind === 'deleted') {
        out.deleted.push({ externalId: event.externalId, table: event.table });
        this.held.delete(heldKey(event.table, event.externalId));
      } else if (event.kind === 'failure') {
        out.failures.push(event);
        if (event.externalId !== undefined) failedIds.add(event.externalId);
        if (event.externalId !== undefined && event.table !== undefined)
          failedIds.add(heldKey(event.table, event.externalId));
      } else {
        out.checkpoints.push(event.cursor as Cursor);
        out.cursor = event.cursor as Cursor;
      }
    }
    if (mode === 'full' && !out.failures.some((f) => f.externalId === undefined)) {
      for (const [key, d] of this.held) {
        // A failure without its table protects the id in every table, as the runner does.
        if (!seen.has(key) && !failedIds.has(key) && !failedIds.has(d.externalId)) this.held.delete(key);
      }
    }
    this.cursor = out.cursor;
    out.requests = ctx.http.requestCount;
    out.bytes = ctx.http.bytesReceived;
    return out;
  }

  /** The held documents' titles, sorted. */
  titles(): string[] {
    return [...this.held.values()].map((d) => d.title).sort();
  }

  /**
   * The held documents by external id alone: for sources whose ids are unique across their tables (a
   * later table's document of the same id hides an earlier one here; use {@link held} for those).
   */
  get docs(): Map<string, SourceDocument> {
    return new Map([...this.held.values()].map((d) => [d.externalId, d]));
  }

  /** The held document of this id (in `table`, when given). */
  doc(externalId: string, table?: string): SourceDocument | undefined {
    if (table !== undefined) return this.held.get(heldKey(table, externalId));
    return [...this.held.values()].find((d) => d.externalId === externalId);
  }

  /** Replaces or adds a held document (a test planting what a connection holds). */
  hold(doc: SourceDocument): void {
    this.held.set(heldKey(doc.table, doc.externalId), doc);
  }

  async *knownBatches(): AsyncGenerator<KnownDocument[]> {
    const all = [...this.held.values()].map((d) => ({
      externalId: d.externalId,
      table: d.table,
      version: d.version ?? null,
    }));
    for (let i = 0; i < all.length; i += 1000) yield all.slice(i, i + 1000);
  }
}

function heldKey(table: string, externalId: string): string {
  return `${table}:${externalId}`;
}
