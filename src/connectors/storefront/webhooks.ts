/**
 * Shopify's webhooks for the `storefront` source (shopify.dev "Verify webhook deliveries" and the GraphQL
 * Admin reference of `webhookSubscriptionCreate` / `webhookSubscriptionDelete`):
 *
 * - each HTTPS delivery carries `X-Shopify-Hmac-Sha256`, the base64 HMAC-SHA256 of the raw body keyed
 *   with the app's client secret, and `X-Shopify-Shop-Domain` (`acme.myshopify.com`), `X-Shopify-Topic`
 *   (`products/update`...), `X-Shopify-Webhook-Id` (the same on every retry of one delivery),
 *   `X-Shopify-Event-Id` (one per event) and `X-Shopify-Triggered-At`;
 * - Shopify signs no time, so there is no replay window to check: a replayed delivery carries an event
 *   id already accepted (a no-op), and an older one only makes the service read the product again;
 * - the body is the REST representation of the resource (`id`, `admin_graphql_api_id`); a `.../delete`
 *   body has only `id`. Nothing but the id is used: the connector reads the document again by gid.
 *
 * Which secret signs: a Dev Dashboard app's (the connection's `client_secret`), the operator's OAuth app's
 * for OAuth connections; a connection with a fixed `access_token` has no secret the service knows, so it
 * cannot receive webhooks (the schedule keeps it current).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import type {
  ChangedDocument,
  ConnectorContext,
  SourceWebhooks,
  WebhookMessage,
  WebhookRequest,
  WebhookSubscription,
} from '../types.ts';
import { ShopifyClient, type StorefrontCredentials } from './client.ts';
import { ARTICLES_TABLE, PAGES_TABLE, PRODUCTS_TABLE } from './sync.ts';

/** What each topic family names: the table and the gid's type. */
const RESOURCES: Record<string, { table: string; gidType: string }> = {
  products: { table: PRODUCTS_TABLE, gidType: 'Product' },
  pages: { table: PAGES_TABLE, gidType: 'Page' },
  articles: { table: ARTICLES_TABLE, gidType: 'Article' },
};

/**
 * The topics the service subscribes to, products first: a topic the store's API version refuses (pages
 * and articles topics are newer than the products ones) is skipped, and the schedule covers it.
 */
export const STOREFRONT_WEBHOOK_TOPICS = [
  'PRODUCTS_CREATE',
  'PRODUCTS_UPDATE',
  'PRODUCTS_DELETE',
  'PAGES_CREATE',
  'PAGES_UPDATE',
  'PAGES_DELETE',
  'ARTICLES_CREATE',
  'ARTICLES_UPDATE',
  'ARTICLES_DELETE',
] as const;

const bodySchema = z.looseObject({
  id: z.union([z.number(), z.string()]),
  admin_graphql_api_id: z.string().optional(),
});

/** `acme` (the stored shop) as Shopify names it in `X-Shopify-Shop-Domain`. */
function shopDomain(shop: string): string {
  return `${shop.toLowerCase()}.myshopify.com`;
}

function header(req: WebhookRequest, name: string): string | undefined {
  const value = req.headers[name];
  return value === undefined || value === '' ? undefined : value;
}

export const storefrontWebhooks: SourceWebhooks<StorefrontCredentials> = {
  accountOf(req) {
    const domain = header(req, 'x-shopify-shop-domain');
    return domain ? domain.trim().toLowerCase() : null;
  },

  connectionAccount(credentials) {
    return shopDomain(credentials.shop);
  },

  signingSecrets({ credentials, subscription, settings }) {
    const secrets = [credentials.client_secret, subscription?.secret ?? undefined];
    // OAuth connections: the operator's app signs (a fixed-token connection has no secret of its own).
    if (!credentials.client_secret) secrets.push(settings['oauthClientSecret']);
    return [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length > 0))];
  },

  verify(req, secret) {
    const given = header(req, 'x-shopify-hmac-sha256');
    if (!given) return 'bad_signature';
    const expected = createHmac('sha256', secret).update(req.rawBody).digest();
    const received = Buffer.from(given.trim(), 'base64');
    if (received.length !== expected.length) return 'bad_signature';
    return timingSafeEqual(received, expected) ? 'valid' : 'bad_signature';
  },

  parse(req): WebhookMessage {
    const topic = header(req, 'x-shopify-topic');
    const eventId = header(req, 'x-shopify-event-id') ?? header(req, 'x-shopify-webhook-id');
    if (!topic || !eventId) {
      throw new AppError(
        'invalid_request',
        'A Shopify webhook carries X-Shopify-Topic and X-Shopify-Webhook-Id.',
      );
    }
    const [family, action] = topic.split('/');
    const resource = RESOURCES[family ?? ''];
    if (!resource || !action) return { kind: 'ignored', eventId };
    let body: z.infer<typeof bodySchema>;
    try {
      body = bodySchema.parse(JSON.parse(req.rawBody.toString('utf8')));
    } catch {
      throw new AppError('invalid_request', `The ${topic} webhook's body names no resource id.`);
    }
    const gid = body.admin_graphql_api_id?.startsWith(`gid://shopify/${resource.gidType}/`)
      ? body.admin_graphql_api_id
      : `gid://shopify/${resource.gidType}/${body.id}`;
    const change: ChangedDocument = { table: resource.table, externalId: gid, deleted: action === 'delete' };
    const occurredAt = header(req, 'x-shopify-triggered-at');
    return { kind: 'changes', eventId, ...(occurredAt ? { occurredAt } : {}), changes: [change] };
  },

  async subscribe(ctx, { callbackUrl }) {
    const client = new ShopifyClient(ctx);
    const ids: string[] = [];
    const refused: string[] = [];
    for (const topic of STOREFRONT_WEBHOOK_TOPICS) {
      try {
        ids.push(await client.createWebhookSubscription(topic, callbackUrl));
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        refused.push(`${topic}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (refused.length > 0) logRefusedTopics(ctx, refused, ids.length);
    if (ids.length === 0) throw new Error(`Shopify refused every webhook topic: ${refused[0]}`);
    return { ids, secret: null };
  },

  async unsubscribe(ctx, subscription: WebhookSubscription) {
    const client = new ShopifyClient(ctx);
    for (const id of subscription.ids) await client.deleteWebhookSubscription(id);
  },
};

function logRefusedTopics(ctx: ConnectorContext<StorefrontCredentials>, refused: string[], created: number) {
  ctx.log.warn(
    { refused: refused.map((r) => r.slice(0, 200)), created },
    'Shopify refused some webhook topics; the schedule keeps those documents current',
  );
}
