/**
 * The `Link` response header (RFC 8288), as Confluence v2 and Shopify REST paginate with it. Hand-written
 * because it is small and the well-kept parsers are not dependencies of the service; it handles what
 * trips naive splitting on commas: quoted values that contain commas and semicolons.
 */

/** One link of a `Link` header: its target and its parameters (names lower-cased, first one wins). */
export interface LinkValue {
  uri: string;
  params: Record<string, string>;
}

/**
 * Parses a `Link` header (RFC 8288 §3): `<uri>; rel="next"; title="a, b", <uri2>; rel=prev`. Quoted
 * parameter values may hold commas and semicolons; a malformed link is skipped, not guessed at.
 */
export function parseLinkHeader(header: string): LinkValue[] {
  const links: LinkValue[] = [];
  let i = 0;
  const skipSpace = () => {
    while (i < header.length && /\s/.test(header[i]!)) i++;
  };
  const skipPastComma = () => {
    // Past the next comma outside quotes: the start of the following link.
    let quoted = false;
    for (; i < header.length; i++) {
      const c = header[i];
      if (quoted && c === '\\') i++;
      else if (c === '"') quoted = !quoted;
      else if (c === ',' && !quoted) {
        i++;
        return;
      }
    }
  };
  while (i < header.length) {
    skipSpace();
    if (header[i] === ',') {
      i++;
      continue;
    }
    if (header[i] !== '<') {
      skipPastComma();
      continue;
    }
    const close = header.indexOf('>', i);
    if (close < 0) break;
    const link: LinkValue = { uri: header.slice(i + 1, close).trim(), params: {} };
    i = close + 1;
    for (;;) {
      skipSpace();
      if (header[i] !== ';') break;
      i++;
      skipSpace();
      const name = /^[^\s=;,]+/.exec(header.slice(i))?.[0]?.toLowerCase();
      if (!name) break;
      i += name.length;
      skipSpace();
      let value = '';
      if (header[i] === '=') {
        i++;
        skipSpace();
        if (header[i] === '"') {
          for (i++; i < header.length && header[i] !== '"'; i++) {
            if (header[i] === '\\') i++;
            value += header[i] ?? '';
          }
          i++;
        } else {
          value = /^[^\s;,]*/.exec(header.slice(i))?.[0] ?? '';
          i += value.length;
        }
      }
      link.params[name] ??= value;
    }
    links.push(link);
    skipPastComma();
  }
  return links;
}
