/**
 * A fake GitBook API: `GET /v1/spaces/{spaceId}` with Bearer auth, errors in the `{error:{code,message}}`
 * envelope. Its 429 carries no Retry-After, only `X-RateLimit-Reset` (UTC epoch seconds), as documented.
 */
import { bearerToken, type FakeServer, startFakeServer } from './fake-server.ts';

export const GITBOOK_GOOD_TOKEN = 'gb_api_fake_good_token_0123456789';
export const GITBOOK_SPACE_ID = 'yN5y7mTE9ShLiSKLYkzY';

export function startFakeGitbook(opts: { token?: string; spaceId?: string } = {}): Promise<FakeServer> {
  const token = opts.token ?? GITBOOK_GOOD_TOKEN;
  const spaceId = opts.spaceId ?? GITBOOK_SPACE_ID;
  return startFakeServer(
    (req) => {
      if (bearerToken(req) !== token) {
        return {
          status: 401,
          body: { error: { code: 401, message: 'You must be authenticated to access this resource' } },
        };
      }
      const match = /\/v1\/spaces\/([^/]+)$/.exec(req.path);
      if (req.method === 'GET' && match) {
        if (decodeURIComponent(match[1]!) !== spaceId) {
          return { status: 404, body: { error: { code: 404, message: 'Space not found' } } };
        }
        return {
          status: 200,
          headers: { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999' },
          body: {
            object: 'space',
            id: spaceId,
            title: 'Product Docs',
            emoji: '1f4d8',
            visibility: 'public',
            createdAt: '2023-03-14T10:02:11.512Z',
            updatedAt: '2024-05-20T08:42:11.123Z',
            urls: {
              location: `https://api.gitbook.com/v1/spaces/${spaceId}`,
              app: `https://app.gitbook.com/s/${spaceId}/`,
              published: 'https://docs.acme.com/',
            },
            organization: 'Xk3Pq9wLmN2Rt5Vb8Yz1',
            revision: 'HxR2f7QmKp0sLz8aWv3E',
          },
        };
      }
      return { status: 404, body: { error: { code: 404, message: 'Not found' } } };
    },
    {
      rateLimitReply: (seconds) => ({
        status: 429,
        headers: {
          'x-ratelimit-limit': '1000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + seconds),
        },
        body: {
          error: { code: 429, message: `API rate limit exceeded. Please try again in ${seconds} seconds` },
        },
      }),
      unavailableReply: () => ({
        status: 503,
        body: { error: { code: 503, message: 'Service unavailable' } },
      }),
    },
  );
}
