/** `support_desk`: a Zendesk account (its Help Center articles), with an API token. */
import { z } from 'zod';
import { joinUrl } from '../base-url.ts';
import {
  basicAuth,
  checkFailure,
  checkRequest,
  credentialsNotAccepted,
  parseCheckBody,
} from '../credential-check.ts';
import { normalizeEmail, normalizeTenantLabel, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';

export const supportDeskInputSchema = z.strictObject({
  subdomain: z.string().min(1).describe('Account subdomain: `acme` or `acme.zendesk.com`.'),
  email: z.string().min(1).describe('E-mail of the agent or admin the API token belongs to.'),
  api_token: z.string().min(1).describe('Zendesk API token.'),
});
export type SupportDeskInput = z.infer<typeof supportDeskInputSchema>;
export interface SupportDeskCredentials {
  /** The bare subdomain (`acme`). */
  subdomain: string;
  email: string;
  api_token: string;
}

/** API-token authentication: Basic with the user name `{email}/token` and the token as password. */
export function zendeskAuthHeader(creds: SupportDeskCredentials): string {
  return basicAuth(`${creds.email}/token`, creds.api_token);
}

// `id` is null for the anonymous user Zendesk answers with when a request carries no usable identity.
const meSchema = z.object({ user: z.object({ id: z.number().nullable(), role: z.string().optional() }) });

const SOURCE = { type: 'support_desk', label: 'Zendesk' } as const;

export const supportDeskConnector: Connector<SupportDeskCredentials, unknown, SupportDeskInput> = {
  ...SOURCE,
  credentials: supportDeskInputSchema,
  normalize(input) {
    return {
      subdomain: normalizeTenantLabel('subdomain', input.subdomain, 'zendesk.com'),
      email: normalizeEmail('email', input.email),
      api_token: normalizeToken('api_token', input.api_token),
    };
  },
  defaultBaseUrl: 'https://{subdomain}.zendesk.com',
  async validate(ctx) {
    const url = joinUrl(ctx.baseUrl, '/api/v2/users/me.json');
    const res = await checkRequest(SOURCE, ctx, 'GET', url, {
      headers: { authorization: zendeskAuthHeader(ctx.credentials) },
    });
    const hint =
      'Check source.email and source.api_token (token access must be enabled in the Zendesk admin center).';
    if (res.status < 200 || res.status > 299) {
      throw checkFailure(
        SOURCE,
        res,
        url,
        {
          401: hint,
          403: 'The user may not use the API; use an agent or admin account.',
          404: 'Check source.subdomain: no Zendesk account answers there.',
          other: hint,
        },
        [ctx.credentials.api_token],
      );
    }
    const me = parseCheckBody(SOURCE, res, url, meSchema, 'Check source.subdomain.');
    if (me.user.id === null) throw credentialsNotAccepted(SOURCE, 'it answered as the anonymous user', hint);
  },
  cursor: z.unknown(),
};
