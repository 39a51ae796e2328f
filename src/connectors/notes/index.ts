/**
 * `notes`: a Notion workspace. Authorized through OAuth (oauth.ts; the generic routes store the token
 * under a secret id and put it into `access_token` before a check or sync), or with an internal integration
 * token given as `access_token`. The content sync (sync.ts) reads pages and database rows; change
 * notifications (webhooks.ts) name pages that sync.ts `syncNotesChanged` reads again.
 */
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { checkFailure, checkRequest, parseCheckBody } from '../credential-check.ts';
import { joinUrl } from '../base-url.ts';
import { normalizeToken } from '../normalize.ts';
import type { Connector, ConnectorContext } from '../types.ts';
import { notionOAuth } from './oauth.ts';
import { type NotesCursor, notesCursorSchema, syncNotes, syncNotesChanged } from './sync.ts';
import { notesWebhooks } from './webhooks.ts';

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
  webhook_verification_token: z
    .string()
    .optional()
    .describe(
      "The verification token (secret_...) Notion posted when the integration's webhook subscription was created; optional: the service also keeps the one Notion posts to it.",
    ),
});
type NotesInput = z.infer<typeof notesInputSchema>;
interface NotesCredentials {
  /** OAuth access token or internal integration token; absent until OAuth has supplied one. */
  access_token?: string;
  /** Learned by the credential check: the workspace the token reads, which change notifications name. */
  workspace_id?: string;
  /** Signs the integration's change notifications, when the caller gave it. */
  webhook_verification_token?: string;
}

/** The token's bot user; `bot.workspace_id` names the workspace (Notion's `BotInfoResponse`). */
const userSchema = z.object({
  object: z.literal('user'),
  id: z.string(),
  bot: z.looseObject({ workspace_id: z.string().nullish() }).nullish(),
});

/** The headers of every Notion request. */
function notionHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'notion-version': NOTION_VERSION };
}

const SOURCE = { type: 'notes', alias: 'notion', label: 'Notion' } as const;

const CHECK_HINTS = {
  401: 'The token is invalid or revoked: connect again through OAuth, or check source.access_token.',
  403: 'The token lacks the capability to read user information; check the integration settings.',
  other: 'Check source.access_token.',
};

/**
 * GET /v1/users/me returns the integration's bot user: the cheapest authenticated call there is, and the
 * one that says which workspace the token reads (kept with the credentials: change notifications name it).
 */
async function checkToken(ctx: ConnectorContext<NotesCredentials>): Promise<NotesCredentials> {
  const creds = ctx.credentials;
  const url = joinUrl(ctx.baseUrl, '/v1/users/me');
  const res = await checkRequest(SOURCE, ctx, 'GET', url, {
    headers: notionHeaders(creds.access_token ?? ''),
  });
  if (res.status < 200 || res.status > 299) {
    throw checkFailure(SOURCE, res, url, CHECK_HINTS, [creds.access_token, creds.webhook_verification_token]);
  }
  const user = parseCheckBody(SOURCE, res, url, userSchema);
  const workspaceId = user.bot?.workspace_id;
  return workspaceId ? { ...creds, workspace_id: workspaceId } : creds;
}

function needToken(creds: NotesCredentials): string {
  if (!creds.access_token) {
    throw new AppError(
      'oauth_required',
      'The notes source has no access token: complete the OAuth consent first (or pass an internal integration token as access_token).',
    );
  }
  return creds.access_token;
}

export const notesConnector: Connector<NotesCredentials, NotesCursor, NotesInput> = {
  ...SOURCE,
  credentials: notesInputSchema,
  normalize(input) {
    return {
      ...(input.access_token === undefined
        ? {}
        : { access_token: normalizeToken('access_token', input.access_token) }),
      ...(input.webhook_verification_token === undefined
        ? {}
        : {
            webhook_verification_token: normalizeToken(
              'webhook_verification_token',
              input.webhook_verification_token,
            ),
          }),
    };
  },
  defaultBaseUrl: 'https://api.notion.com',
  baseUrlSetting: 'KB_NOTES_BASE_URL',
  oauth: notionOAuth,
  async validate(ctx) {
    needToken(ctx.credentials);
    return await checkToken(ctx);
  },
  sync(ctx, opts) {
    const token = needToken(ctx.credentials);
    return syncNotes(ctx, opts, { headers: notionHeaders(token), token });
  },
  syncChanged(ctx, changes) {
    const token = needToken(ctx.credentials);
    return syncNotesChanged(ctx, changes, { headers: notionHeaders(token), token });
  },
  webhooks: notesWebhooks,
  cursor: notesCursorSchema,
  // Notion's documented average per integration (vendor-apis/notion.md 8); bursts above it are allowed.
  requestsPerSecond: 3,
};
