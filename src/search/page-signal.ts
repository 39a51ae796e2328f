/**
 * The page-level signal: a chunk's score gains what its page's title and headings say about the query
 * (the fields of migration 021, matched by pageFieldMatches in src/db/repositories/search.ts). A passage
 * ranks by its own text; this decides between passages that match about as well, in favour of the page
 * that is about the thing over a page that mentions it in passing (release notes name every API in a
 * line, an overview names every feature).
 *
 *   boost = w_title · cos(query, title) + w_headings · share(query in headings) / √max(1, len / pivot)
 *
 * cos is the cosine of the query's and the title's term sets, each term weighted by its BM25 idf (a title
 * that is exactly the query's rare words scores 1; "Cookie Parameter Models" scores below "Cookie
 * Parameters" for a question about cookies). share is the idf share of the query's terms found among the
 * headings, damped by the headings' length past a pivot (pivoted length normalization): a page with a
 * thousand headings (release notes, an API index) carries every word and says little by having one.
 *
 * Weights are per mode, on the scale of that mode's score: semantic adds to the cosine similarity
 * (1 − distance), hybrid and keyword to the fused or normalized score in [0, 1]. Chosen on the tuning half
 * of the FastAPI question set only (bench/docs-quality.ts, docs/search.md has the grid); SciFact checked
 * not to fall (bench/scifact.ts).
 */
import type { PageFieldMatch } from '../db/repositories/search.ts';
import type { SearchMode } from './query.ts';

export interface PageWeights {
  title: number;
  headings: number;
}

export const PAGE_WEIGHTS: Record<SearchMode, PageWeights> = {
  semantic: { title: 0.2, headings: 0.2 },
  hybrid: { title: 0.3, headings: 0.2 },
  keyword: { title: 0.3, headings: 0.2 },
};

/** Heading lexemes a page may have before its heading match is damped. */
export const HEADINGS_PIVOT = 64;

/** The score a chunk gains from its page's fields. */
export function pageBoost(m: PageFieldMatch, w: PageWeights): number {
  const damp = 1 / Math.sqrt(Math.max(1, m.headings_len / HEADINGS_PIVOT));
  return w.title * m.title + w.headings * m.headings_share * damp;
}
