/** `docs_space`: one GitBook space, read with a personal access token. */
import { z } from 'zod';
import { pathSegment } from '../base-url.ts';
import { credentialCheck } from '../credential-check.ts';
import { normalizeId, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';

export const docsSpaceInputSchema = z.strictObject({
  access_token: z.string().min(1).describe('GitBook personal access token.'),
  space_id: z
    .string()
    .min(1)
    .describe('Id of the space to sync (from its URL: app.gitbook.com/s/<space_id>).'),
});
export type DocsSpaceInput = z.infer<typeof docsSpaceInputSchema>;
export interface DocsSpaceCredentials {
  access_token: string;
  /** GitBook ids are `[A-Za-z0-9_-]+`; anything else is refused, as it would alter the request path. */
  space_id: string;
}

export function gitbookHeaders(creds: DocsSpaceCredentials): Record<string, string> {
  return { authorization: `Bearer ${creds.access_token}` };
}

const spaceSchema = z.object({ object: z.literal('space'), id: z.string() });

const SOURCE = { type: 'docs_space', alias: 'gitbook', label: 'GitBook' } as const;

const spaceHint = "Check source.space_id: the space must exist and the token's user must have access to it.";

export const docsSpaceConnector: Connector<DocsSpaceCredentials, unknown, DocsSpaceInput> = {
  ...SOURCE,
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
    source: SOURCE,
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
  cursor: z.unknown(),
};
