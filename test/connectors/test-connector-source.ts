/**
 * A fake content source on loopback for the job-engine tests: documents with a change sequence, an
 * incremental change feed (`/test/changes?since=`), a full listing (`/test/docs?after=`), and the
 * GitBook-shaped space endpoint the `docs_space` credential check calls. Documents can be added,
 * changed, deleted and broken (listed with an error) while a sync runs; pages can be slowed down or held.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { bearerToken, type FakeServer, type RecordedRequest, startFakeServer } from '../fakes/fake-server.ts';

export const TEST_SOURCE_TOKEN = 'test_source_token_0123456789';
export const TEST_SPACE_ID = 'space1';

export interface FakeDoc {
  id: string;
  title: string;
  body: string;
  seq: number;
  deleted: boolean;
  /** Listed with an error instead of a body: the connector reports a failure for it. */
  broken: boolean;
}

export interface TestSource {
  url: string;
  server: FakeServer;
  docs: Map<string, FakeDoc>;
  /** Requests to the sync endpoints (not the credential check). */
  syncRequests(): RecordedRequest[];
  put(id: string, title: string, body?: string): void;
  remove(id: string): void;
  breakDoc(id: string, broken?: boolean): void;
  /** Add `n` documents `d00000`..; returns their ids. */
  seed(n: number, prefix?: string): string[];
  /** Delay of every sync page (ms). */
  pageDelayMs: number;
  /** Hold every sync page until the returned function is called. */
  hold(): () => void;
  close(): Promise<void>;
}

export async function startTestSource(opts: { pageSize?: number } = {}): Promise<TestSource> {
  const pageSize = opts.pageSize ?? 100;
  const docs = new Map<string, FakeDoc>();
  let seq = 0;
  let gate: Promise<void> | null = null;
  const source = {} as TestSource;

  const listed = (d: FakeDoc) =>
    d.broken
      ? { id: d.id, seq: d.seq, deleted: d.deleted, error: `document ${d.id} cannot be exported` }
      : { id: d.id, seq: d.seq, deleted: d.deleted, title: d.title, body: d.body };

  const server = await startFakeServer(async (req) => {
    if (bearerToken(req) !== TEST_SOURCE_TOKEN) {
      return { status: 401, body: { error: { code: 401, message: 'You need to be authenticated' } } };
    }
    if (req.path === `/v1/spaces/${TEST_SPACE_ID}`) {
      return { status: 200, body: { object: 'space', id: TEST_SPACE_ID, title: 'Test space' } };
    }
    if (!req.path.startsWith('/test/')) return { status: 404, body: { error: { message: 'not found' } } };
    if (gate) await gate;
    if (source.pageDelayMs > 0) await sleep(source.pageDelayMs);
    const limit = Math.min(Number(req.query.get('limit') ?? pageSize), 1000);
    if (req.path === '/test/changes') {
      const since = Number(req.query.get('since') ?? 0);
      const changed = [...docs.values()].filter((d) => d.seq > since).sort((a, b) => a.seq - b.seq);
      const page = changed.slice(0, limit);
      return {
        status: 200,
        body: { items: page.map(listed), next: page.at(-1)?.seq ?? since, hasMore: changed.length > limit },
      };
    }
    if (req.path === '/test/docs') {
      const after = req.query.get('after') ?? '';
      const live = [...docs.values()]
        .filter((d) => !d.deleted && d.id > after)
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      const page = live.slice(0, limit);
      return { status: 200, body: { items: page.map(listed), seq, hasMore: live.length > limit } };
    }
    return { status: 404, body: { error: { message: 'not found' } } };
  });

  Object.assign(source, {
    url: server.url,
    server,
    docs,
    pageDelayMs: 0,
    syncRequests: () => server.requests.filter((r) => r.path.startsWith('/test/')),
    put(id: string, title: string, body = `Body of ${title}.`) {
      const old = docs.get(id);
      docs.set(id, { id, title, body, seq: ++seq, deleted: false, broken: old?.broken ?? false });
    },
    remove(id: string) {
      const d = docs.get(id);
      if (d) docs.set(id, { ...d, deleted: true, seq: ++seq });
    },
    breakDoc(id: string, broken = true) {
      const d = docs.get(id);
      if (d) docs.set(id, { ...d, broken, seq: ++seq });
    },
    seed(n: number, prefix = 'd') {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = `${prefix}${String(i).padStart(5, '0')}`;
        source.put(id, `Document ${id}`, `Short body of document ${id}.`);
        ids.push(id);
      }
      return ids;
    },
    hold() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        gate = null;
        release();
      };
    },
    close: () => server.close(),
  } satisfies Partial<TestSource>);
  return source;
}
