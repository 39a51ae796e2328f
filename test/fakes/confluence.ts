/**
 * A fake Confluence Cloud site: `GET /wiki/rest/api/user/current` with Basic `email:api_token`. Wrong
 * credentials: 401 in the `errors[]` envelope; no credentials: 200 with the anonymous user.
 */
import { basicCredentials, type FakeServer, startFakeServer } from './fake-server.ts';

export const CONFLUENCE_GOOD = { email: 'writer@acme.test', api_token: 'ATATT_fake_good_token_0123456789' };

export function startFakeConfluence(opts: { email?: string; api_token?: string } = {}): Promise<FakeServer> {
  const email = opts.email ?? CONFLUENCE_GOOD.email;
  const apiToken = opts.api_token ?? CONFLUENCE_GOOD.api_token;
  return startFakeServer(
    (req) => {
      const isCurrent = req.path.endsWith('/wiki/rest/api/user/current');
      const creds = basicCredentials(req);
      if (!creds && isCurrent) {
        return {
          status: 200,
          body: {
            type: 'anonymous',
            displayName: 'Anonymous',
            _links: { base: 'https://acme.atlassian.net/wiki' },
          },
        };
      }
      if (!creds || creds.user !== email || creds.password !== apiToken) {
        return {
          status: 401,
          body: { errors: [{ status: 401, code: 'UNAUTHORIZED', title: 'Unauthorized', detail: null }] },
        };
      }
      if (req.method === 'GET' && isCurrent) {
        return {
          status: 200,
          body: {
            type: 'known',
            accountId: '5b10ac8d82e05b22cc7d4ef5',
            accountType: 'atlassian',
            email,
            publicName: 'Writer',
            displayName: 'Writer',
            _links: {
              base: 'https://acme.atlassian.net/wiki',
              self: 'https://acme.atlassian.net/wiki/rest/api/user?accountId=5b10ac8d82e05b22cc7d4ef5',
            },
          },
        };
      }
      return {
        status: 404,
        body: { errors: [{ status: 404, code: 'NOT_FOUND', title: 'Not Found', detail: null }] },
      };
    },
    {
      rateLimitReply: (seconds) => ({
        status: 429,
        headers: {
          'retry-after': String(seconds),
          'x-ratelimit-limit': '100',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': new Date(Date.now() + seconds * 1000).toISOString().slice(0, 16) + 'Z',
          'ratelimit-reason': 'confluence-burst-based',
        },
        body: {
          errors: [{ status: 429, code: 'TOO_MANY_REQUESTS', title: 'Too Many Requests', detail: null }],
        },
      }),
    },
  );
}
