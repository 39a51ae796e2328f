/** `wiki`: a Confluence Cloud site, with an Atlassian account e-mail and API token. */
import { z } from 'zod';
import { joinUrl } from '../base-url.ts';
import {
  basicAuth,
  checkFailure,
  checkRequest,
  credentialsNotAccepted,
  parseCheckBody,
} from '../credential-check.ts';
import { normalizeEmail, normalizeSiteHost, normalizeToken } from '../normalize.ts';
import type { Connector } from '../types.ts';

export const wikiInputSchema = z.strictObject({
  domain_name: z
    .string()
    .min(1)
    .describe(
      'Site host name: `acme` (meaning acme.atlassian.net), `acme.atlassian.net` or a custom domain.',
    ),
  email: z.string().min(1).describe('E-mail of the Atlassian account the API token belongs to.'),
  api_token: z.string().min(1).describe('Atlassian API token.'),
});
export type WikiInput = z.infer<typeof wikiInputSchema>;
export interface WikiCredentials {
  /** Full host name of the site (`acme.atlassian.net` or a custom domain). */
  domain_name: string;
  email: string;
  api_token: string;
}

/** API-token authentication: Basic `email:api_token`. */
export function confluenceAuthHeader(creds: WikiCredentials): string {
  return basicAuth(creds.email, creds.api_token);
}

// Confluence answers anonymous requests on sites open to anonymous users, with `type: "anonymous"`.
const currentUserSchema = z.object({ type: z.string(), accountId: z.string().optional() });

const SOURCE = { type: 'wiki', label: 'Confluence' } as const;

export const wikiConnector: Connector<WikiCredentials, unknown, WikiInput> = {
  ...SOURCE,
  credentials: wikiInputSchema,
  normalize(input) {
    return {
      domain_name: normalizeSiteHost('domain_name', input.domain_name, 'atlassian.net'),
      email: normalizeEmail('email', input.email),
      api_token: normalizeToken('api_token', input.api_token),
    };
  },
  defaultBaseUrl: 'https://{domain_name}',
  async validate(ctx) {
    const url = joinUrl(ctx.baseUrl, '/wiki/rest/api/user/current');
    const res = await checkRequest(SOURCE, ctx, 'GET', url, {
      headers: { authorization: confluenceAuthHeader(ctx.credentials) },
    });
    const hint = 'Check source.email and source.api_token (an Atlassian API token of that account).';
    if (res.status < 200 || res.status > 299) {
      throw checkFailure(
        SOURCE,
        res,
        url,
        {
          401: hint,
          403: 'The account may not use the Confluence API on this site.',
          404: 'Check source.domain_name: no Confluence Cloud site answers there.',
          other: hint,
        },
        [ctx.credentials.api_token],
      );
    }
    const user = parseCheckBody(SOURCE, res, url, currentUserSchema, 'Check source.domain_name.');
    if (user.type === 'anonymous')
      throw credentialsNotAccepted(SOURCE, 'it answered as the anonymous user', hint);
  },
  cursor: z.unknown(),
};
