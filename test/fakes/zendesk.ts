/**
 * A fake Zendesk account: `GET /api/v2/users/me[.json]` with API-token Basic auth
 * (`{email}/token:{api_token}`). Wrong credentials: 401 `{"error":"Couldn't authenticate you"}`; no
 * credentials at all: 200 with the anonymous user (`id: null`), as Zendesk does.
 */
import { basicCredentials, type FakeServer, startFakeServer } from './fake-server.ts';

export const ZENDESK_GOOD = { email: 'agent@acme.test', api_token: 'zd_fake_good_token_0123456789' };

const RATE_HEADERS = { 'x-rate-limit': '700', 'x-rate-limit-remaining': '699' };

export function startFakeZendesk(opts: { email?: string; api_token?: string } = {}): Promise<FakeServer> {
  const email = opts.email ?? ZENDESK_GOOD.email;
  const apiToken = opts.api_token ?? ZENDESK_GOOD.api_token;
  return startFakeServer(
    (req) => {
      const isMe = /\/api\/v2\/users\/me(\.json)?$/.test(req.path);
      const creds = basicCredentials(req);
      if (!creds) {
        if (isMe) {
          return {
            status: 200,
            headers: RATE_HEADERS,
            body: {
              user: {
                id: null,
                url: null,
                name: 'Anonymous user',
                email: 'invalid@example.com',
                role: 'end-user',
              },
            },
          };
        }
        return { status: 401, body: { error: "Couldn't authenticate you" } };
      }
      if (creds.user !== `${email}/token` || creds.password !== apiToken) {
        return {
          status: 401,
          headers: { 'www-authenticate': 'Basic realm="Web Password"' },
          body: { error: "Couldn't authenticate you" },
        };
      }
      if (req.method === 'GET' && isMe) {
        return {
          status: 200,
          headers: RATE_HEADERS,
          body: {
            user: {
              id: 360786799676,
              url: 'https://acme.zendesk.com/api/v2/users/360786799676.json',
              name: 'Agent',
              email,
              role: 'admin',
              active: true,
            },
          },
        };
      }
      return { status: 404, body: { error: 'RecordNotFound', description: 'Not found' } };
    },
    {
      // Zendesk's 429 body is not reliably JSON; the contract is the status and Retry-After.
      rateLimitReply: (seconds) => ({
        status: 429,
        headers: { ...RATE_HEADERS, 'x-rate-limit-remaining': '0', 'retry-after': String(seconds) },
        body: 'Rate limit exceeded',
      }),
      unavailableReply: () => ({ status: 503, headers: { 'retry-after': '0' }, body: 'Maintenance' }),
    },
  );
}
