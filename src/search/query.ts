import type { ChunkHit } from '../db/repositories/search.ts';

export type SearchMode = 'semantic' | 'hybrid' | 'keyword';

export interface SearchQuery {
  organizationId: string;
  /** The query embedding (already computed; search never embeds, the route does). */
  vector: Float32Array;
  text: string;
  limit: number;
  mode: SearchMode;
  tags?: string[] | undefined;
  visibility?: string[] | undefined;
  sourceTypes?: string[] | undefined;
  cosineDistanceThreshold?: number | undefined;
  includeEmbedding: boolean;
  /** At most this many hits per item (none: as many as rank). */
  maxPerItem?: number | undefined;
}

/** A hit as the database reads it (src/db/repositories/search.ts), without its chunk id. */
export type SearchHit = ChunkHit;
