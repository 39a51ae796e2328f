/**
 * Which help centers a pass reads. Without the `brands` option, the subdomain's own (as always). With it,
 * the brands' (`GET /api/v2/brands`): each brand has its own help center on its own subdomain, read at
 * `https://{brand}.zendesk.com/api/v2/help_center/...`; only live ones (`help_center_state: "enabled"`,
 * active, not deleted) are content: a `restricted` help center is visible to agents only, not yet
 * published.
 */
import { sourceName } from '../credential-check.ts';
import type { ConnectorContext } from '../types.ts';
import type { ItemEvent } from './articles.ts';
import { brandBaseUrl, listBrands, SUPPORT_DESK_SOURCE, type SupportDeskCredentials } from './client.ts';
import type { Brand } from './schemas.ts';

export interface HelpCenter {
  subdomain: string;
  /** Key prefix of its items: `''` for the connection's own subdomain, else `{subdomain}/`. */
  prefix: string;
  /** Its API base (the connection's, with the brand's subdomain). */
  baseUrl: string;
  /** `brand:{subdomain}` when the connection syncs brands. */
  brandTag: string | undefined;
}

export interface HelpCenters {
  centers: HelpCenter[];
  /**
   * Key prefixes whose held items stay although no help center of this pass answers for them: brands the
   * connection names that could not be read this time (not visible, not reachable).
   */
  keep: Set<string>;
}

const prefixOf = (ctx: ConnectorContext<SupportDeskCredentials>, subdomain: string) =>
  subdomain === ctx.credentials.subdomain ? '' : `${subdomain}/`;

function isLive(b: Brand): boolean {
  return (
    b.active !== false &&
    b.is_deleted !== true &&
    b.has_help_center !== false &&
    b.help_center_state === 'enabled'
  );
}

function brandFailure(message: string): ItemEvent {
  return {
    kind: 'failure',
    error: new Error(`${sourceName(SUPPORT_DESK_SOURCE)} ${message}`),
    retryable: false,
  };
}

/** The help centers of this pass; a named brand that cannot be read is a failure naming it. */
export async function* helpCenters(
  ctx: ConnectorContext<SupportDeskCredentials>,
): AsyncGenerator<ItemEvent, HelpCenters> {
  const wanted = ctx.credentials.brands;
  const own = ctx.credentials.subdomain;
  if (wanted === undefined) {
    return {
      centers: [{ subdomain: own, prefix: '', baseUrl: ctx.baseUrl, brandTag: undefined }],
      keep: new Set(),
    };
  }
  const brands = await listBrands(ctx);
  const out: HelpCenters = { centers: [], keep: new Set() };
  const bySubdomain = new Map(brands.map((b) => [b.subdomain.toLowerCase(), b]));
  const names = wanted === 'all' ? brands.filter(isLive).map((b) => b.subdomain.toLowerCase()) : wanted;
  for (const name of [...new Set(names)]) {
    const brand = bySubdomain.get(name);
    if (!brand) {
      out.keep.add(prefixOf(ctx, name));
      yield brandFailure(
        `has no brand ${JSON.stringify(name)} these credentials can see (an agent sees only its own brands): check source.brands.`,
      );
      continue;
    }
    if (!isLive(brand)) {
      const state = brand.is_deleted
        ? 'deleted'
        : brand.active === false
          ? 'inactive'
          : (brand.help_center_state ?? 'absent');
      yield brandFailure(
        `brand ${JSON.stringify(name)} has no live help center (it is ${state}): nothing of it syncs.`,
      );
      continue;
    }
    const baseUrl = brandBaseUrl(ctx.baseUrl, own, name);
    if (baseUrl === undefined) {
      out.keep.add(prefixOf(ctx, name));
      yield brandFailure(
        `brand ${JSON.stringify(name)} cannot be reached: the operator's KB_SUPPORT_DESK_BASE_URL does not name {subdomain}, so it reaches one help center only.`,
      );
      continue;
    }
    out.centers.push({ subdomain: name, prefix: prefixOf(ctx, name), baseUrl, brandTag: `brand:${name}` });
  }
  return out;
}
