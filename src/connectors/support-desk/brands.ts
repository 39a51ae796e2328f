/**
 * Which help centers a pass reads. Without the `brands` option, the subdomain's own (as always). With it,
 * the brands' (`GET /api/v2/brands`): each brand has its own help center on its own subdomain, read at
 * `https://{brand}.zendesk.com/api/v2/help_center/...`; only live ones (`help_center_state: "enabled"`,
 * active, not deleted) are content: a `restricted` help center is visible to agents only, not yet
 * published.
 *
 * The brand list costs a request (or more) a sync, as much as the rest of an unchanged help center, and
 * brands change rarely: so a pass remembers which help centers it read and reads the list again only on
 * a first pass or a reset, when the option changed, when the last read named a brand it could not read
 * (its failure is told every sync until it resolves), when the last read is older than the listing
 * interval, or when a remembered help center answers 404 (disabled or deleted since). What no signal shows
 * (a brand added under `"all"`, a help center made `restricted`, a brand deactivated whose help center still
 * answers) reaches the items at the next read, the listing interval at the latest.
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
  /** What the next pass may use instead of the brand list; undefined: it reads the list. */
  remember: RememberedBrands | undefined;
}

/** The help centers a read of the brand list found, for the passes after it. */
export interface RememberedBrands {
  /** The option they answer (its JSON): another option reads the list again. */
  wanted: string;
  /** When the list was read (epoch ms). */
  readAt: number;
  /** Their subdomains. */
  subdomains: string[];
}

const wantedKey = (ctx: ConnectorContext<SupportDeskCredentials>) => JSON.stringify(ctx.credentials.brands);

/**
 * The help centers the last read of the brand list found, when they may stand in for reading it again:
 * the same option, read within `maxAgeMs`, and every one still reachable from the connection's base.
 */
export function rememberedHelpCenters(
  ctx: ConnectorContext<SupportDeskCredentials>,
  remembered: RememberedBrands | undefined,
  at: { now: number; maxAgeMs: number },
): HelpCenters | undefined {
  if (ctx.credentials.brands === undefined || remembered === undefined) return undefined;
  if (remembered.wanted !== wantedKey(ctx) || at.now - remembered.readAt >= at.maxAgeMs) return undefined;
  const centers: HelpCenter[] = [];
  for (const name of remembered.subdomains) {
    const baseUrl = brandBaseUrl(ctx.baseUrl, ctx.credentials.subdomain, name);
    if (baseUrl === undefined) return undefined;
    centers.push({ subdomain: name, prefix: prefixOf(ctx, name), baseUrl, brandTag: `brand:${name}` });
  }
  return { centers, keep: new Set(), remember: remembered };
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

/**
 * The help centers of this pass, from the brand list read now (`now`: this pass's time); a named brand
 * that cannot be read is a failure naming it.
 */
export async function* helpCenters(
  ctx: ConnectorContext<SupportDeskCredentials>,
  at: { now: number } = { now: Date.now() },
): AsyncGenerator<ItemEvent, HelpCenters> {
  const wanted = ctx.credentials.brands;
  const own = ctx.credentials.subdomain;
  if (wanted === undefined) {
    return {
      centers: [{ subdomain: own, prefix: '', baseUrl: ctx.baseUrl, brandTag: undefined }],
      keep: new Set(),
      remember: undefined,
    };
  }
  const brands = await listBrands(ctx);
  const out: HelpCenters = { centers: [], keep: new Set(), remember: undefined };
  let failed = false;
  const bySubdomain = new Map(brands.map((b) => [b.subdomain.toLowerCase(), b]));
  const names = wanted === 'all' ? brands.filter(isLive).map((b) => b.subdomain.toLowerCase()) : wanted;
  for (const name of [...new Set(names)]) {
    const brand = bySubdomain.get(name);
    if (!brand) {
      failed = true;
      out.keep.add(prefixOf(ctx, name));
      yield brandFailure(
        `has no brand ${JSON.stringify(name)} these credentials can see (an agent sees only its own brands): check source.brands.`,
      );
      continue;
    }
    if (!isLive(brand)) {
      failed = true;
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
      failed = true;
      out.keep.add(prefixOf(ctx, name));
      yield brandFailure(
        `brand ${JSON.stringify(name)} cannot be reached: the operator's KB_SUPPORT_DESK_BASE_URL does not name {subdomain}, so it reaches one help center only.`,
      );
      continue;
    }
    out.centers.push({ subdomain: name, prefix: prefixOf(ctx, name), baseUrl, brandTag: `brand:${name}` });
  }
  if (!failed) {
    out.remember = {
      wanted: wantedKey(ctx),
      readAt: at.now,
      subdomains: out.centers.map((c) => c.subdomain),
    };
  }
  return out;
}
