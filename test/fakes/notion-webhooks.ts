/**
 * Notion's side of integration webhooks, for a {@link NotionWorkspace}: what Notion POSTs to a
 * subscription's URL (developers.notion.com/reference/webhooks, /reference/webhooks-events-delivery;
 * payload types in makenotion/notion-sdk-js `src/api-endpoints/webhooks.ts`, the signature in its
 * `src/webhooks.ts`).
 *
 * - Creating a subscription posts `{"verification_token": "secret_..."}`, unsigned ({@link handshake}).
 * - Every event is a compact JSON body `{id, timestamp, workspace_id, workspace_name, subscription_id,
 *   integration_id, type, authors, attempt_number, api_version, entity: {id, type}, data}` signed with
 *   `X-Notion-Signature: sha256=<hex HMAC-SHA256 of the body keyed with the verification token>`. Page
 *   events carry `data.parent` (`{id, type: "space" | "page" | "block" | "database", data_source_id?}`);
 *   `page.content_updated` and `*.content_updated` of a database carry `data.updated_blocks`, and
 *   `page.properties_updated` `data.updated_properties`.
 * - A retry of an event is the same event (same `id`, same `timestamp`) with the next `attempt_number`
 *   (1 to 8), signed again ({@link retry}).
 *
 * The signature is computed here with node:crypto, not with the service's code, so a mistake in one does
 * not hide in the other.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { NotionWorkspace } from './notion.ts';

export interface NotionEventBody {
  id: string;
  timestamp: string;
  workspace_id: string;
  workspace_name: string;
  subscription_id: string;
  integration_id: string;
  type: string;
  authors: Array<{ id: string; type: string }>;
  attempt_number: number;
  api_version: string;
  entity: { id: string; type: string };
  data?: Record<string, unknown>;
}

/** `sha256=` + the hex HMAC-SHA256 of `body` keyed with `token`, as `X-Notion-Signature` carries it. */
export function signNotionBody(body: string, token: string): string {
  return `sha256=${createHmac('sha256', token).update(body).digest('hex')}`;
}

export interface Delivery {
  status: number;
  body: unknown;
}

/** How a delivery reaches the subscriber: a POST of `body` with `headers`. */
export type WebhookTransport = (body: string, headers: Record<string, string>) => Promise<Delivery>;

/** A POST over HTTP to `url`, as Notion sends it. */
export function httpTransport(url: string): WebhookTransport {
  return async (body, headers) => {
    const res = await fetch(url, { method: 'POST', headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, body: parsed };
  };
}

/** One webhook subscription of an integration, delivering through `transport` (its URL). */
export class NotionWebhookSender {
  readonly workspace: NotionWorkspace;
  readonly #transport: WebhookTransport;
  /** What Notion shows once and signs every event with. */
  readonly verificationToken: string;
  readonly subscriptionId = randomUUID();
  readonly integrationId = randomUUID();
  readonly #author = randomUUID();

  constructor(opts: { workspace: NotionWorkspace; transport: WebhookTransport; verificationToken?: string }) {
    this.workspace = opts.workspace;
    this.#transport = opts.transport;
    this.verificationToken = opts.verificationToken ?? `secret_${randomBytes(32).toString('base64url')}`;
  }

  /** The one-time verification request of a new subscription: unsigned, only the token. */
  handshake(): Promise<Delivery> {
    return this.#post(JSON.stringify({ verification_token: this.verificationToken }), {});
  }

  /**
   * An event about a page (`page.*`: `data.parent` from the workspace) or, with `entityType`, another
   * object. `data` adds to (or replaces keys of) the event's data.
   */
  event(
    type: string,
    entityId: string,
    opts: { entityType?: string; data?: Record<string, unknown>; timestamp?: string } = {},
  ): NotionEventBody {
    const entityType = opts.entityType ?? (type.split('.')[0] === 'comment' ? 'comment' : 'page');
    const data: Record<string, unknown> = {};
    if (entityType === 'page') data['parent'] = this.workspace.webhookParent(entityId);
    if (type === 'page.content_updated') data['updated_blocks'] = [];
    if (type === 'page.properties_updated') data['updated_properties'] = ['title'];
    return {
      id: randomUUID(),
      timestamp: opts.timestamp ?? new Date(this.workspace.now()).toISOString(),
      workspace_id: this.workspace.workspaceId,
      workspace_name: this.workspace.workspaceName,
      subscription_id: this.subscriptionId,
      integration_id: this.integrationId,
      type,
      authors: [{ id: this.#author, type: 'person' }],
      attempt_number: 1,
      api_version: '2025-09-03',
      entity: { id: entityId, type: entityType },
      data: { ...data, ...opts.data },
    };
  }

  /** The same event's next delivery attempt. */
  retry(event: NotionEventBody): NotionEventBody {
    return { ...event, attempt_number: event.attempt_number + 1 };
  }

  /**
   * Posts an event signed with the verification token (or `token`); `signature: null` sends none, a string
   * sends that header as is.
   */
  deliver(
    event: NotionEventBody | string,
    opts: { token?: string; signature?: string | null } = {},
  ): Promise<Delivery> {
    const body = typeof event === 'string' ? event : JSON.stringify(event);
    const signature =
      opts.signature === undefined
        ? signNotionBody(body, opts.token ?? this.verificationToken)
        : opts.signature;
    return this.#post(body, signature === null ? {} : { 'x-notion-signature': signature });
  }

  /** Builds a page event and delivers it. */
  send(type: string, entityId: string): Promise<Delivery> {
    return this.deliver(this.event(type, entityId));
  }

  #post(body: string, headers: Record<string, string>): Promise<Delivery> {
    return this.#transport(body, {
      'content-type': 'application/json',
      'user-agent': 'notion-api',
      ...headers,
    });
  }
}
