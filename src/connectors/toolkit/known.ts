/**
 * The connection's documents (SyncOptions.known) by external id, read whole before a pass compares them
 * with the source. Ids and versions only: small beside the documents, even for a large source.
 */
import type { KnownDocument, SyncOptions } from '../types.ts';

export async function knownById(
  known: SyncOptions<unknown>['known'],
  signal: AbortSignal,
  table?: string,
): Promise<Map<string, KnownDocument>> {
  const out = new Map<string, KnownDocument>();
  for await (const batch of known()) {
    signal.throwIfAborted();
    for (const doc of batch) if (table === undefined || doc.table === table) out.set(doc.externalId, doc);
  }
  return out;
}
