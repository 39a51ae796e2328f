/** `docs_space`: one GitBook space, read with a personal access token; its content updates may come by webhook. */
import { z } from 'zod';
import { pathSegment } from '../base-url.ts';
import { credentialCheck } from '../credential-check.ts';
import { normalizeId, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';
import { DOCS_SPACE_SOURCE, type DocsSpaceCredentials, gitbookHeaders } from './client.ts';
import { syncDocsSpaceChanged } from './changes.ts';
import { type DocsSpaceCursor, docsSpaceCursorSchema, syncDocsSpace } from './sync.ts';
import { docsSpaceWebhooks } from './webhooks.ts';

export { type DocsSpaceCredentials, gitbookHeaders } from './client.ts';

const docsSpaceInputSchema = z.strictObject({
  access_token: z.string().min(1).describe('GitBook personal access token.'),
  space_id: z
    .string()
    .min(1)
    .describe('Id of the space to sync (from its URL: app.gitbook.com/s/<space_id>).'),
  webhook_secret: z
    .string()
    .optional()
    .describe(
      "The secret of GitBook's Webhook integration installed on the space (its signing secret); optional: with it, content updates reach the index without waiting for the schedule.",
    ),
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
      ...(input.webhook_secret === undefined
        ? {}
        : { webhook_secret: normalizeToken('webhook_secret', input.webhook_secret) }),
    };
  },
  defaultBaseUrl: 'https://api.gitbook.com',
  baseUrlSetting: 'KB_DOCS_SPACE_BASE_URL',
  settings: {
    webhookSecret: {
      env: 'KB_DOCS_SPACE_WEBHOOK_SECRET',
      default: '',
      pattern: /^[\x21-\x7e]{0,512}$/,
      description:
        "the signing secret of GitBook's Webhook integration, for installations that share one (printable, no spaces), e.g. 3q2-7wE_x...",
    },
  },
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
    secrets: (creds) => [creds.access_token, creds.webhook_secret],
  }),
  sync: syncDocsSpace,
  cursor: docsSpaceCursorSchema,
  webhooks: docsSpaceWebhooks,
  syncChanged: (ctx, changes) => syncDocsSpaceChanged(ctx, changes),
  // GitBook publishes no request rate (vendor-apis/gitbook.md §7: limits differ per method class and are
  // read from the X-RateLimit-* headers), so requests are not paced; a 429 waits until X-RateLimit-Reset.
};
