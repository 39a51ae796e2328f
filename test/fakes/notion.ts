/** A fake Notion API: `GET /v1/users/me` with Bearer auth and a mandatory `Notion-Version`. */
import { bearerToken, type FakeReply, type FakeServer, startFakeServer } from './fake-server.ts';

export const NOTION_GOOD_TOKEN = 'ntn_fake_good_token_0123456789';

function notionError(status: number, code: string, message: string): FakeReply {
  return {
    status,
    body: { object: 'error', status, code, message, request_id: '0f8c1d7e-2a4b-4c6d-8e9f-a1b2c3d4e5f6' },
  };
}

export function startFakeNotion(opts: { token?: string } = {}): Promise<FakeServer> {
  const token = opts.token ?? NOTION_GOOD_TOKEN;
  return startFakeServer(
    (req) => {
      if (!req.headers['notion-version']) {
        return notionError(
          400,
          'missing_version',
          'Notion-Version header failed validation: Notion-Version should be defined.',
        );
      }
      if (bearerToken(req) !== token) return notionError(401, 'unauthorized', 'API token is invalid.');
      if (req.method === 'GET' && req.path === '/v1/users/me') {
        return {
          status: 200,
          body: {
            object: 'user',
            id: 'b3414d65-1224-4ff7-8ffa-c06674a8f8a2',
            name: 'KB Connector',
            avatar_url: null,
            type: 'bot',
            bot: { owner: { type: 'workspace', workspace: true }, workspace_name: 'Acme Docs' },
            request_id: '6a1c3c1e-3b3a-4b7e-9d35-2d3f1b0f7b20',
          },
        };
      }
      return notionError(400, 'invalid_request_url', 'Invalid request URL.');
    },
    {
      rateLimitReply: (seconds) => ({
        ...notionError(429, 'rate_limited', 'You have been rate limited. Please try again in a few minutes.'),
        headers: { 'retry-after': String(seconds) },
      }),
      unavailableReply: () =>
        notionError(503, 'service_unavailable', 'Notion is unavailable, please try again later.'),
    },
  );
}
