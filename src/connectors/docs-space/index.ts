/** `docs_space`: one GitBook space, read with a personal access token. */
import { z } from 'zod';
import { pathSegment } from '../base-url.ts';
import { credentialCheck } from '../credential-check.ts';
import { normalizeId, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';
import { DOCS_SPACE_SOURCE, type DocsSpaceCredentials, gitbookHeaders } from './client.ts';
import { type DocsSpaceCursor, docsSpaceCursorSchema, syncDocsSpace } from './sync.ts';

export { type DocsSpaceCredentials, gitbookHeaders } from './client.ts';

const docsSpaceInputSchema = z.strictObject({
  access_token: z.string().min(1).describe('GitBook personal access token.'),
  space_id: z
    .string()
    .min(1)
    .describe('Id of the space to sync (from its URL: app.gitbook.com/s/<space_id>).'),
});
type DocsSpaceInput = z.infer<typeof docsSpaceInputSchema>;

const spaceSchema = z.object({ object: z.literal('space'), id: z.string() });

const spaceHint = "Check source.space_id: the space must exist and the token's user must have access to it.";

export const docsSpaceConnector: Connector<DocsSpaceCredentials, DocsSpaceCursor, DocsSpaceInput> = {
  ...DOCS_SPACE_SOURCE,
  credentials: docsSpaceInputSchema,
  normalize(input) {
    return {
      access_token: normalizeToken('access_token', input.access_token),
      space_id: normalizeId('space_id', input.space_id),
    };
  },
  defaultBaseUrl: 'https://api.gitbook.com',
  baseUrlSetting: 'KB_DOCS_SPACE_BASE_URL',
  // Reading the space itself checks the token and the token's access to that space in one call.
  validate: credentialCheck({
    source: DOCS_SPACE_SOURCE,
    path: (creds: DocsSpaceCredentials) => `/v1/spaces/${pathSegment(creds.space_id)}`,
    headers: gitbookHeaders,
    schema: spaceSchema,
    hints: {
      401: 'Check source.access_token (a GitBook personal access token).',
      403: spaceHint,
      404: spaceHint,
      other: 'Check source.access_token and source.space_id.',
    },
    secrets: (creds) => [creds.access_token],
  }),
  sync: syncDocsSpace,
  cursor: docsSpaceCursorSchema,
  // GitBook publishes no request rate (vendor-apis/gitbook.md §7: limits differ per method class and are
  // read from the X-RateLimit-* headers), so requests are not paced; a 429 waits until X-RateLimit-Reset.
};
