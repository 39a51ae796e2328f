/**
 * `notes`: a Notion workspace. Authorized through OAuth (oauth.ts; the generic routes store the token
 * under a secret id and put it into `access_token` before a check or sync), or with an internal integration
 * token given as `access_token`. The content sync (sync.ts) reads pages and database rows.
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { credentialCheck } from '../credential-check.ts';
import { normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';
import { notionOAuth } from './oauth.ts';
import { type NotesCursor, notesCursorSchema, syncNotes } from './sync.ts';

/**
 * The API version every request sends (`Notion-Version` is mandatory). 2025-09-03 is the version with
 * data sources, the official SDK's default; older versions fail on databases with several data sources.
 */
export const NOTION_VERSION = '2025-09-03';

const notesInputSchema = z.strictObject({
  access_token: z
    .string()
    .optional()
    .describe('Internal integration token; omit to use the token stored by the OAuth flow.'),
});
type NotesInput = z.infer<typeof notesInputSchema>;
interface NotesCredentials {
  /** OAuth access token or internal integration token; absent until OAuth has supplied one. */
  access_token?: string;
}

const userSchema = z.object({ object: z.literal('user'), id: z.string() });

/** The headers of every Notion request. */
function notionHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'notion-version': NOTION_VERSION };
}

const SOURCE = { type: 'notes', alias: 'notion', label: 'Notion' } as const;

// GET /v1/users/me returns the integration's bot user: the cheapest authenticated call there is.
const checkToken = credentialCheck({
  source: SOURCE,
  path: '/v1/users/me',
  headers: (creds: NotesCredentials) => notionHeaders(creds.access_token ?? ''),
  schema: userSchema,
  hints: {
    401: 'The token is invalid or revoked: connect again through OAuth, or check source.access_token.',
    403: 'The token lacks the capability to read user information; check the integration settings.',
    other: 'Check source.access_token.',
  },
  secrets: (creds) => [creds.access_token],
});

export const notesConnector: Connector<NotesCredentials, NotesCursor, NotesInput> = {
  ...SOURCE,
  credentials: notesInputSchema,
  normalize(input) {
    return input.access_token === undefined
      ? {}
      : { access_token: normalizeToken('access_token', input.access_token) };
  },
  defaultBaseUrl: 'https://api.notion.com',
  baseUrlSetting: 'KB_NOTES_BASE_URL',
  oauth: notionOAuth,
  async validate(ctx) {
    if (!ctx.credentials.access_token) {
      throw new AppError(
        'oauth_required',
        'The notes source has no access token: complete the OAuth consent first (or pass an internal integration token as access_token).',
      );
    }
    await checkToken(ctx);
  },
  sync(ctx, opts) {
    const token = ctx.credentials.access_token;
    if (!token) {
      throw new AppError(
        'oauth_required',
        'The notes source has no access token: complete the OAuth consent first (or pass an internal integration token as access_token).',
      );
    }
    return syncNotes(ctx, opts, { headers: notionHeaders(token), token });
  },
  cursor: notesCursorSchema,
  // Notion's documented average per integration (vendor-apis/notion.md 8); bursts above it are allowed.
  requestsPerSecond: 3,
};
