/**
 * A fake Shopify store: `POST /admin/api/{version}/graphql.json` with `X-Shopify-Access-Token`, answering
 * the `{ shop { name } }` query. Wrong token: 401 with `errors` as a string; a token without access:
 * 200 with `errors[].extensions.code = "ACCESS_DENIED"`.
 */
import { type FakeServer, startFakeServer } from './fake-server.ts';

export const SHOPIFY_GOOD_TOKEN = 'shpat_fake_good_token_0123456789abcdef';
export const SHOPIFY_NO_ACCESS_TOKEN = 'shpat_fake_token_without_access_000000';

const COST = {
  requestedQueryCost: 1,
  actualQueryCost: 1,
  throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 1999, restoreRate: 100 },
};

export function startFakeShopify(opts: { token?: string; shopName?: string } = {}): Promise<FakeServer> {
  const token = opts.token ?? SHOPIFY_GOOD_TOKEN;
  return startFakeServer(
    (req) => {
      const match = /\/admin\/api\/([^/]+)\/graphql\.json$/.exec(req.path);
      if (!match || req.method !== 'POST') return { status: 404, body: { errors: 'Not Found' } };
      const version = match[1]!;
      const given = req.headers['x-shopify-access-token'];
      if (given === SHOPIFY_NO_ACCESS_TOKEN) {
        return {
          status: 200,
          headers: { 'x-shopify-api-version': version },
          body: {
            data: { shop: null },
            errors: [
              {
                message: 'Access denied for shop field.',
                locations: [{ line: 1, column: 3 }],
                path: ['shop'],
                extensions: {
                  code: 'ACCESS_DENIED',
                  documentation: 'https://shopify.dev/api/usage/access-scopes',
                },
              },
            ],
            extensions: { cost: COST },
          },
        };
      }
      if (given !== token) {
        return {
          status: 401,
          body: { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' },
        };
      }
      let query = '';
      try {
        query = String((JSON.parse(req.body) as { query?: unknown }).query ?? '');
      } catch {
        return { status: 400, body: { errors: 'Bad Request' } };
      }
      if (/\bshop\s*\{\s*name\s*\}/.test(query)) {
        return {
          status: 200,
          headers: { 'x-shopify-api-version': version },
          body: { data: { shop: { name: opts.shopName ?? 'Acme Outdoor' } }, extensions: { cost: COST } },
        };
      }
      return {
        status: 200,
        body: { errors: [{ message: 'Unsupported query in the fake', extensions: { code: 'UNSUPPORTED' } }] },
      };
    },
    {
      rateLimitReply: (seconds) => ({
        status: 429,
        headers: { 'retry-after': `${seconds}.0` },
        body: {
          errors:
            'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.',
        },
      }),
    },
  );
}
