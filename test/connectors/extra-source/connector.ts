/**
 * `bulletin`: a made-up source that exists only to prove a source is declared once. Everything the
 * service needs to know about it is in this object: its type and alias, input fields, base-URL setting
 * (`KB_BULLETIN_BASE_URL`), credential check, and a cursor-paginated content sync built on the toolkit.
 * The test registers it with one line and nothing under src/ names it.
 */
import { z } from 'zod';
import { joinUrl } from '../../../src/connectors/base-url.ts';
import { credentialCheck } from '../../../src/connectors/credential-check.ts';
import { normalizeToken } from '../../../src/connectors/normalize.ts';
import { paginateCursor } from '../../../src/connectors/toolkit/pagination.ts';
import type { Connector } from '../../../src/connectors/types.ts';

const inputSchema = z.strictObject({ api_key: z.string().min(1).describe('Bulletin API key.') });
type Input = z.infer<typeof inputSchema>;
interface Credentials {
  api_key: string;
}

const SOURCE = { type: 'bulletin', alias: 'bulletinboard', label: 'Bulletin' } as const;
const auth = (c: Credentials) => ({ authorization: `Key ${c.api_key}` });

const postsPage = z.object({
  posts: z.array(z.object({ id: z.string(), title: z.string(), body: z.string() })),
  next_cursor: z.string().nullable(),
});

export const bulletinConnector: Connector<Credentials, null, Input> = {
  ...SOURCE,
  credentials: inputSchema,
  normalize: (input) => ({ api_key: normalizeToken('api_key', input.api_key) }),
  defaultBaseUrl: 'https://api.bulletin.invalid',
  baseUrlSetting: 'KB_BULLETIN_BASE_URL',
  validate: credentialCheck({
    source: SOURCE,
    path: '/v1/me',
    headers: auth,
    schema: z.object({ board: z.string() }),
    hints: { 401: 'Check source.api_key.', other: 'Check source.api_key.' },
    secrets: (c) => [c.api_key],
  }),
  async *sync(ctx) {
    const pages = paginateCursor(ctx, {
      request: { url: joinUrl(ctx.baseUrl, '/v1/posts'), headers: auth(ctx.credentials) },
      schema: postsPage,
      items: (p) => p.posts,
      cursor: { param: 'cursor', next: (p) => p.next_cursor },
    });
    for await (const page of pages) {
      for (const post of page.data.posts) {
        yield {
          kind: 'document',
          doc: {
            externalId: post.id,
            title: post.title,
            url: `https://bulletin.invalid/posts/${post.id}`,
            markdown: post.body,
            visibility: 'private',
            tags: ['bulletin'],
            table: 'bulletin_posts',
          },
        };
      }
    }
    yield { kind: 'checkpoint', cursor: null };
  },
  cursor: z.null(),
};
