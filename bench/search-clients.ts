/**
 * The search bench's clients, on a thread of their own (bench/search-latency.ts starts it): requests made
 * from the server's own thread took its event loop's time (fetch, JSON of 40 kB answers) from the server
 * they measure, and a real deployment's clients run elsewhere. `clients` loops share the queries, each
 * query at most once; no new request starts after `budgetS` once `minRequests` are done.
 */
import { readFileSync } from 'node:fs';
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

export type SearchClientsResult =
  | {
      times: number[];
      wallMs: number;
      /** This thread's CPU over the run (Linux), else null. */
      cpuMs: number | null;
    }
  | { error: string };

/** CPU time of the calling thread in ms, from /proc (Linux only; null elsewhere). */
function threadCpuMs(): number | null {
  try {
    return statCpuMs(readFileSync('/proc/thread-self/stat', 'utf8'));
  } catch {
    return null;
  }
}

/** utime + stime of a /proc stat line, in ms (clock ticks of 10 ms, the kernel's USER_HZ of 100). */
export function statCpuMs(stat: string): number {
  // The command name (2nd field) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

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
  const cpu0 = threadCpuMs();
  const t0 = performance.now();
  const more = () =>
    next < t.queries.length && (next < t.minRequests || performance.now() - t0 < t.budgetS * 1000);
  await Promise.all(
    Array.from({ length: t.clients }, async () => {
      while (more()) times.push(await callSearch(t, t.queries[next++]!));
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = threadCpuMs();
  return { times, wallMs, cpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 };
}

if (parentPort) {
  const result = await run(workerData as SearchClientsTask).catch(
    (err: unknown): SearchClientsResult => ({ error: (err as Error).message }),
  );
  parentPort.postMessage(result);
}
