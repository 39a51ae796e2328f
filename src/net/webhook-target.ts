/**
 * The check of a webhook endpoint's URL when it is registered: the same policy as every request out
 * (outbound.ts), so a caller learns at once that a private, loopback, link-local or metadata target will
 * never be sent to, rather than from a delivery log. Every delivery goes through the guarded fetch too,
 * which checks again the address it connects to (a name may point elsewhere by then).
 */
import dns from 'node:dns';
import net from 'node:net';
import { isGlobalAddress, type Resolver } from './outbound.ts';

const systemResolver: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true })) as Awaited<ReturnType<Resolver>>;

/** Null when the URL may be sent to; else why not, in words for the caller. */
export async function webhookTargetProblem(
  url: string,
  opts: { allowPrivate: boolean; lookup?: Resolver },
): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'url must use http or https';
  if (parsed.username || parsed.password) return 'url must not carry a user name or password';
  if (opts.allowPrivate) return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) !== 0) {
    return isGlobalAddress(host) ? null : `url points to ${host}, which is not a public address`;
  }
  let addresses: Awaited<ReturnType<Resolver>>;
  try {
    addresses = await (opts.lookup ?? systemResolver)(host);
  } catch {
    return `url's host ${host} could not be resolved`;
  }
  if (addresses.length === 0 || !addresses.some((a) => isGlobalAddress(a.address))) {
    return `url's host ${host} resolves only to non-public addresses`;
  }
  return null;
}
