/**
 * The app's paths and the methods each takes, collected as routes are registered, so a request the
 * router finds no route for can be told apart: a path that exists with other methods (405 with `Allow`,
 * RFC 9110 §15.5.6; OPTIONS answers 204 with `Allow`) from a path that does not exist (404). The router
 * itself only answers "no route" for both.
 */

interface PathEntry {
  pattern: string;
  regex: RegExp;
  /** Names of the `:param` segments, in order (their capture groups). */
  params: string[];
  methods: Set<string>;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `/api/connect/crawling/:id` → a regex over the raw (still percent-encoded) path, one group per param. */
function compile(pattern: string): { regex: RegExp; params: string[] } {
  const params: string[] = [];
  const source = pattern
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) {
        params.push(segment.slice(1));
        return '([^/]+)';
      }
      return escapeRegex(segment);
    })
    .join('/');
  return { regex: new RegExp(`^${source}$`), params };
}

export class RouteTable {
  readonly #paths = new Map<string, PathEntry>();

  /** Record a route (Fastify's `onRoute`: one call per method, HEAD routes of GETs included). */
  add(methods: string | string[], pattern: string): void {
    let entry = this.#paths.get(pattern);
    if (!entry) {
      entry = { pattern, ...compile(pattern), methods: new Set() };
      this.#paths.set(pattern, entry);
    }
    for (const m of Array.isArray(methods) ? methods : [methods]) {
      entry.methods.add(m.toUpperCase());
      // HEAD routes here are the ones Fastify adds beside GETs; a plugin's prefix root (`/docs/` beside
      // `/docs`) reaches onRoute only through its HEAD route, so HEAD stands for its GET too.
      if (m.toUpperCase() === 'HEAD') entry.methods.add('GET');
    }
  }

  /**
   * The entry that serves `path`, as the router picks it: an exact static path first, else the matching
   * pattern with the most static segments.
   */
  #match(path: string): { entry: PathEntry; groups: string[] } | undefined {
    const exact = this.#paths.get(path);
    if (exact && exact.params.length === 0 && !exact.pattern.includes('*'))
      return { entry: exact, groups: [] };
    let best: { entry: PathEntry; groups: string[]; rank: number } | undefined;
    for (const entry of this.#paths.values()) {
      const m = entry.regex.exec(path);
      if (!m) continue;
      const rank = entry.pattern.split('/').filter((s) => s !== '*' && !s.startsWith(':')).length;
      if (!best || rank > best.rank) best = { entry, groups: m.slice(1), rank };
    }
    return best;
  }

  /**
   * The methods the resource at `path` takes, as an `Allow` header lists them (HEAD with GET, and OPTIONS:
   * every known path answers it), or undefined when no route has this path.
   */
  allowedMethods(path: string): string[] | undefined {
    const found = this.#match(path);
    if (!found) return undefined;
    const methods = new Set(found.entry.methods);
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return [...methods].sort();
  }

  /**
   * A request the router sends to a parametric route although an exact static path exists without its
   * method (`GET /api/connect/knowledgebase-items/query` would read an item with id `query`): the methods
   * that path takes, to answer 405; undefined for every other request.
   */
  shadowedMethods(method: string, path: string): string[] | undefined {
    const exact = this.#paths.get(path);
    if (!exact || exact.params.length > 0 || exact.pattern.includes('*')) return undefined;
    if (exact.methods.has(method) || (method === 'HEAD' && exact.methods.has('GET'))) return undefined;
    return this.allowedMethods(path);
  }

  /** The parameters of the route that serves `path`, raw (percent-encoded) as they arrived. */
  rawParams(path: string): Array<{ name: string; raw: string }> {
    const found = this.#match(path);
    if (!found) return [];
    return found.entry.params.map((name, i) => ({ name, raw: found.groups[i] ?? '' }));
  }
}
