/**
 * GitBook's side of change notifications, for a {@link FakeGitbookSpace}: what the **Webhook** integration
 * installed on a space POSTs to its configured URL (gitbook.com/docs "Receive webhook notifications";
 * GitbookIO/integrations `integrations/webhook/src/common.ts`, `deliverWebhook` and
 * `generateHmacSignature`).
 *
 * - The body is the integration event as JSON: `space_content_updated` is
 *   `{"eventId", "type", "spaceId", "installationId", "revisionId"}` (the space's primary content has a new
 *   revision; no page is named).
 * - Headers: `Content-Type: application/json`, `User-Agent: GitBook-Webhook`,
 *   `X-GitBook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the secret>`.
 * - A failed delivery (5xx, 429, network) is retried up to 3 times, seconds apart, with the same `t` and
 *   signature ({@link deliver} with the same event and `timestamp`).
 *
 * The signature is computed here with node:crypto, not with the service's code, so a mistake in one does
 * not hide in the other.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FakeGitbookSpace } from './gitbook.ts';

export interface GitbookEventBody {
  eventId: string;
  type: string;
  spaceId: string;
  installationId: string;
  revisionId?: string;
}

/** The `X-GitBook-Signature` value for `body` sent at `timestamp` (unix seconds), keyed with `secret`. */
export function signGitbookBody(body: string, secret: string, timestamp: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

export interface GitbookDelivery {
  status: number;
  body: unknown;
}

/** How a delivery reaches the receiver: a POST of `body` with `headers`. */
export type GitbookTransport = (body: string, headers: Record<string, string>) => Promise<GitbookDelivery>;

/** The Webhook integration installed on one space, with its secret, delivering through `transport`. */
export class GitbookWebhookSender {
  readonly space: FakeGitbookSpace;
  /** The secret the installation's configuration shows (GitBook generates 32 random bytes, base64url). */
  readonly secret: string;
  readonly installationId = `inst_${randomBytes(6).toString('hex')}`;
  readonly #transport: GitbookTransport;
  /** The clock the signature's `t` is read from (ms). */
  now: () => number = () => Date.now();

  constructor(opts: { space: FakeGitbookSpace; transport: GitbookTransport; secret?: string }) {
    this.space = opts.space;
    this.#transport = opts.transport;
    this.secret = opts.secret ?? randomBytes(32).toString('base64url');
  }

  /** `space_content_updated` for the space's current revision (or `revisionId`). */
  contentUpdated(revisionId = this.space.revision): GitbookEventBody {
    return {
      eventId: `evt_${randomBytes(8).toString('hex')}`,
      type: 'space_content_updated',
      spaceId: this.space.spaceId,
      installationId: this.installationId,
      revisionId,
    };
  }

  /**
   * Posts an event signed with the installation's secret (or `secret`) at `timestamp` (unix seconds, default
   * now); `signature` replaces the header as is, `null` sends none.
   */
  deliver(
    event: GitbookEventBody | string,
    opts: { secret?: string; timestamp?: number; signature?: string | null } = {},
  ): Promise<GitbookDelivery> {
    const body = typeof event === 'string' ? event : JSON.stringify(event);
    const timestamp = opts.timestamp ?? Math.floor(this.now() / 1000);
    const signature =
      opts.signature === undefined
        ? signGitbookBody(body, opts.secret ?? this.secret, timestamp)
        : opts.signature;
    return this.#transport(body, {
      'content-type': 'application/json',
      'user-agent': 'GitBook-Webhook',
      ...(signature === null ? {} : { 'x-gitbook-signature': signature }),
    });
  }

  /** A content update of the current revision, delivered. */
  sendContentUpdated(): Promise<GitbookDelivery> {
    return this.deliver(this.contentUpdated());
  }
}
