/**
 * The one URL redactor: how every URL appears in messages and logs. Sources and crawled sites put tokens
 * in query strings (`?api_key=`, signed links) and user info (`https://user:pass@host`), so only the
 * scheme, host (with port) and path are kept.
 */
export function redactUrl(url: string | URL, invalid = '(invalid URL)'): string {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return invalid;
  }
  // `protocol//host`, not `origin`: the origin of a non-special scheme (`mailto:`, `data:`) is "null".
  return `${u.protocol}//${u.host}${u.pathname}`;
}
