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
}

export interface SearchHit {
  item_id: string;
  title: string;
  source_url: string;
  visibility: string;
  distance: number;
  chunk_index: number;
  chunk_plain_text: string;
  source_type: string;
  source_table_name: string;
  tags: string[];
  embedding?: string;
}
