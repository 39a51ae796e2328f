/**
 * The search bench's clients, on a thread of their own (bench/search-latency.ts starts it): requests made
 * from the server's own thread took its event loop's time (fetch, JSON of 40 kB answers) from the server
 * they measure, and a real deployment's clients run elsewhere. `clients` loops share the queries, each
 * query at most once; no new request starts after `budgetS` once `minRequests` are done.
 */
import { parentPort, workerData } from 'node:worker_threads';

export interface SearchClientsTask {
  url: string;
  key: string;
  queries: string[];
  clients: number;
  limit: number;
  extra: Record<string, unknown>;
  budgetS: number;
  minRequests: number;
}

export type SearchClientsResult = { times: number[]; wallMs: number } | { error: string };

async function callSearch(t: SearchClientsTask, query: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, limit: t.limit, ...t.extra }),
  });
  const body = (await res.json()) as { result?: unknown[] };
  const ms = performance.now() - t0;
  if (res.status !== 200 || body.result?.length !== t.limit)
    throw new Error(`search failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return ms;
}

async function run(t: SearchClientsTask): Promise<SearchClientsResult> {
  let next = 0;
  const times: number[] = [];
  const t0 = performance.now();
  const more = () =>
    next < t.queries.length && (next < t.minRequests || performance.now() - t0 < t.budgetS * 1000);
  await Promise.all(
    Array.from({ length: t.clients }, async () => {
      while (more()) times.push(await callSearch(t, t.queries[next++]!));
    }),
  );
  return { times, wallMs: performance.now() - t0 };
}

if (parentPort) {
  const result = await run(workerData as SearchClientsTask).catch(
    (err: unknown): SearchClientsResult => ({ error: (err as Error).message }),
  );
  parentPort.postMessage(result);
}
