/**
 * Generated from the service's /openapi.json by openapi-typescript; do not edit.
 * Regenerate with `node scripts/client-types.ts` (test/client/drift.test.ts checks it is current).
 */
export interface paths {
    "/api/admin/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an API key */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/organizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create an organization and its first API key */
        post: operations["createOrganization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/organizations/{id}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create another API key for an organization */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/connection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a connection (or rotate its credentials)
         * @description Checks the credentials with one authenticated call to the source (400 source_auth_failed / source_unreachable), then stores them encrypted. A second create for the same type replaces the credentials and keeps the synced items. An OAuth source (notes, support_desk) given no token in the request takes the one its consent stored (the newest, or the one under secretId): without a stored consent, 400 oauth_required. Each credential field's pattern is the rule the source applies. Extension: a new connection starts its first sync at once (its `jobId` in the answer) unless the body says `"sync": false`; so does one that needed consent again and gets new credentials.
         */
        post: operations["createConnection"];
        /**
         * Disconnect a connection
         * @description Body: `{"type"}` or `{"connectionId"}`. Unknown connection: 404 not_found.
         */
        delete: operations["deleteConnection"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/connection-sync-jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get all sync jobs of a connection
         * @description Query: `type` or `connectionId`, exactly one of them (400 otherwise; OpenAPI cannot tie query parameters together), `limit` (1-100, default 20), `offset` (default 0). `next` and `previous` are absolute URLs of the adjacent pages, absent when there is none.
         */
        get: operations["listSyncJobs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/connection-types": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the source types and their fields (extension)
         * @description Each source type with the `source` fields of POST /api/connect/connection (name, label, kind, required, secret, description) and, for OAuth sources, the field the consent needs and whether it is configured.
         */
        get: operations["listConnectionTypes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/connections": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List connections (extension) */
        get: operations["listConnections"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/crawling/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List crawl jobs (extension)
         * @description Query: `limit` (1-100, default 20), `offset` (default 0). `next` and `previous` are absolute URLs of the adjacent pages, absent when there is none.
         */
        get: operations["listCrawls"];
        put?: never;
        /**
         * Create a web crawl job
         * @description Crawls the site of `url` (robots.txt, sitemaps and links; polite per host), storing each page's main content as a `crawl` item as it arrives. `limit` counts distinct pages stored and is exact; near-duplicate pages collapse into the page they repeat, rel=canonical and robots noindex are honoured. Private, loopback and link-local targets are refused unless the operator sets KB_CRAWL_ALLOW_PRIVATE. Crawling a URL again updates its item, leaves unchanged pages alone and removes pages that now answer 404/410. includePaths and excludePaths are RE2 patterns, which JSON Schema cannot check: one that does not compile is refused (400).
         */
        post: operations["createCrawl"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/crawling/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a crawl job (extension) */
        get: operations["getCrawl"];
        put?: never;
        post?: never;
        /** Cancel a crawl job (extension) */
        delete: operations["cancelCrawl"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/knowledgebase-items": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Update knowledge base items
         * @description Each id at most once per request (400 otherwise; JSON Schema `uniqueItems` compares whole entries, so the document cannot say it). Ids of no item of the organization are listed in `notFound`.
         */
        put: operations["updateItems"];
        /** Upload a document (extension) */
        post: operations["uploadItem"];
        /** Delete knowledge base items */
        delete: operations["deleteItems"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/knowledgebase-items/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an item with its content (extension) */
        get: operations["getItem"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/knowledgebase-items/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Query knowledge base items */
        post: operations["queryItems"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/knowledgebase-items/reembed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-embed every item (extension)
         * @description Marks every item of the caller's organization `pending`; the indexer chunks and embeds each again with the configured model, and search keeps serving its old chunks until the new ones replace them. 503 when this service has no embedding model loaded (nothing would embed them).
         */
        post: operations["reembedItems"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/knowledgebase-items/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Knowledge base progress (extension) */
        get: operations["getItemStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/oauth/callback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OAuth callback (public)
         * @description No API key: the source redirects the browser here. A forged, expired or already used `state` is refused (400). When the consent was started with a redirectUri, answers 302 to it with `secretId` and `status` (`success`, or `error` with `error`) instead of JSON.
         */
        get: operations["oauthCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/oauth/initiate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start OAuth consent (notes, notion, support_desk, zendesk, storefront, shopify)
         * @description Open `consentUrl` in a browser; after consent the source redirects to /api/connect/oauth/callback, which stores the token under `secretId`. Poll /api/connect/secret-id-exists, then create the connection. 400 oauth_not_configured when the operator has not set up the OAuth app.
         */
        post: operations["initiateOAuth"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/run-sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Trigger a sync
         * @description Body: `{"type"|"connectionId", "jobType"?: "sync"|"reset"}`. 404 unknown connection; 409 sync_in_progress while a job of the connection is pending or running; 409 connection_inactive.
         */
        post: operations["runSync"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/secret-id-exists": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether an OAuth token is stored under a secretId */
        get: operations["secretIdExists"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/set-connection-status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Set the status of a connection
         * @description Body: `{"type"|"connectionId", "status": "active"|"inactive"}`. Unknown connection: 404.
         */
        patch: operations["setConnectionStatus"];
        trace?: never;
    };
    "/api/connect/webhook-endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List webhook endpoints */
        get: operations["listWebhookEndpoints"];
        put?: never;
        /**
         * Register a webhook endpoint
         * @description Events are POSTed to `url`, signed per Standard Webhooks with the `secret` answered here (shown once). A private, loopback or link-local target is refused with 400 invalid_request.
         */
        post: operations["createWebhookEndpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/connect/webhook-endpoints/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a webhook endpoint */
        delete: operations["deleteWebhookEndpoint"];
        options?: never;
        head?: never;
        /** Update a webhook endpoint (extension) */
        patch: operations["updateWebhookEndpoint"];
        trace?: never;
    };
    "/api/connect/webhook-endpoints/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a webhook endpoint's recent deliveries */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/consume/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Semantic search of knowledge base items */
        post: operations["search"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: the database, the model and the service are ready for traffic */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Connection: {
            /** @description Set when the source refused to refresh the OAuth access: what to do (connect again through OAuth). Null otherwise. */
            consentNeeded: string | null;
            /** @description Unix epoch ms */
            createdAt: number;
            id: string;
            lastJob: components["schemas"]["SyncJob"] | null;
            /** @description Unix epoch ms of the next scheduled sync */
            nextSyncAt: number | null;
            schedule: {
                intervalMinutes: number;
            } | null;
            /** @enum {string} */
            status: "active" | "inactive";
            /** @description Canonical source type */
            type: string;
            /** @description Unix epoch ms */
            updatedAt: number;
        };
        ConnectionType: {
            /** @description The product's name, accepted as `source.type` too */
            alias: string;
            /** @description The source's own fields, in the order it declares them */
            fields: {
                description: string;
                /** @enum {string} */
                kind: "string" | "boolean";
                /** @description What a form calls the field (`API token` for `api_token`) */
                label: string;
                /** @description The field of `source` in POST /api/connect/connection */
                name: string;
                required: boolean;
                /** @description A credential to mask in forms (tokens) */
                secret: boolean;
            }[];
            /** @description The product behind the type */
            label: string;
            /** @description Sources that connect through OAuth consent; null for the others */
            oauth: {
                /** @description Whether the operator set up this source's OAuth app */
                configured: boolean;
                /** @description The field POST /api/connect/oauth/initiate needs besides `type` (each account runs its own consent) */
                tenantField: string | null;
            } | null;
            /** @description Canonical source type (`source.type`) */
            type: string;
        };
        CrawlJob: {
            allowExternalLinks: boolean;
            /** @description ISO 8601 UTC when the job ended (completed, failed or cancelled); null before */
            completed_at: string | null;
            /** @description distinct pages stored so far (created, updated, retagged or unchanged): what `limit` counts; never above it */
            completed_pages: number;
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description extension: ms between request starts per host the crawl asked for; null: the host's default */
            delayMs: number | null;
            /** @description why the job failed; null unless `failed` */
            error_message: string | null;
            excludePaths: string[];
            /** @description extension: fetches at most (3 x `limit`, at least `limit` + 10); the crawl ends there */
            fetch_limit: number;
            /** @description extension: URLs fetched so far, whatever they yielded */
            fetched_pages: number;
            /** @description job identifier */
            id: string;
            includePaths: string[];
            /** @description extension: pages that are lists of links are searchable too (false: stored and listed, not chunked) */
            indexListPages: boolean;
            /** @description extension: the page budget: distinct pages stored at most (fetches that store nothing do not count) */
            limit: number;
            /** @description extension: requests in flight per host the crawl asked for; null: the host's default */
            maxConcurrency: number | null;
            /** @description extension: link depth limit; null for none */
            maxDepth: number | null;
            /** @description extension: finished pages by outcome: `created`, `updated`, `retagged` (same content, this crawl's tags added), `unchanged` (same content or 304, tags too), `removed` (404/410, item deleted), `gone`, `duplicate`, `near_duplicate`, `canonical` (its rel=canonical URL is the page stored), `not_html`, `noindex`, `empty`, `tombstoned`, `budget` (fetched after the limit was reached), `failed`, `blocked`... */
            outcomes: {
                [key: string]: number;
            };
            /** @description extension, for debugging: URLs not crawled or not stored, by reason (`excluded`, `not_included`, `robots`, `external`, `depth`, `budget` (not reached: the limit or the fetch cap ended the crawl), `not_html`, `duplicate`, `near_duplicate` (text nearly the same as a stored page of the host), `canonical` (stored under its rel=canonical URL), `noindex`, `empty`, `too_long`, `blocked`, `failed`, `pdf_encrypted`, `pdf_unreadable`, `pdf_too_large`), each with a count of distinct URLs and a few examples. The kept item of duplicates carries a `variants:N` tag: N pages of the crawl had its text. */
            refused: {
                [key: string]: {
                    count: number;
                    /** @description `duplicate`, `near_duplicate`, `canonical`: the URL each example stands for */
                    of?: {
                        [key: string]: string;
                    };
                    sample: string[];
                };
            };
            /** @description the owning project: the caller's organization id */
            service_project_id: string;
            /** @enum {string} */
            status: "idle" | "scraping" | "completed" | "failed" | "cancelled";
            /** @description extension: tags given to every crawled item */
            tags: string[];
            /** @description the caller's organization id */
            tenant_id: string;
            /** @description pages stored plus pages still queued or being fetched, never above `limit`; equal to `completed_pages` once the job ends */
            total_pages: number;
            /** @description ISO 8601 UTC */
            updated_at: string;
            /** @description the crawled start URL */
            url: string;
            /** @description extension: warnings in all, those beyond the list included */
            warning_count: number;
            /** @description extension: problems a person can act on that did not fail the job, at most 50 distinct entries (10 of one code); a repeated one counts up its entry */
            warnings: components["schemas"]["JobWarning"][];
        };
        /** @description Every error response: a code from a closed set and a sentence a person can act on. */
        Error: {
            error: string;
            message: string;
        };
        ItemStats: {
            byConnection: {
                byIndexingStatus: {
                    failed: number;
                    indexed: number;
                    pending: number;
                };
                connectionId: string;
                total: number;
                type: string;
            }[];
            /** @description `indexed` items are searchable; `pending` ones wait for the indexer */
            byIndexingStatus: {
                failed: number;
                indexed: number;
                pending: number;
            };
            bySourceType: {
                crawl: number;
                integration: number;
                upload: number;
            };
            /** @description Searchable passages */
            chunks: number;
            indexer: {
                /** @description Estimated seconds until every pending item is searchable: 0 when none is pending, null when no rate is known */
                etaSeconds: number | null;
                /** @description Pending items the indexer takes up to and including this organization's last pending one */
                queuedAhead: number;
                /** @description Items indexed per second of indexing work, by every worker for every organization, over the last 5 minutes (time with nothing to index does not count); null when too few were */
                ratePerSecond: number | null;
            };
            /** @description The organization's items */
            total: number;
        };
        JobWarning: {
            /**
             * @description `sitemap_unreadable`, `sitemap_other_host` (a sitemap lists URLs of another host: ignored), `robots_unreadable` (5xx, 429 or no answer: the host is not crawled, as RFC 9309 asks), `redirect_refused` (a redirect the crawl did not follow, and why), `page_too_large` (a page cut at the size cap, or a PDF over it skipped), `permission_missing` (the credentials lack a permission at the source; what it costs is listed in `failures` too)
             * @enum {string}
             */
            code: "sitemap_unreadable" | "sitemap_other_host" | "robots_unreadable" | "redirect_refused" | "page_too_large" | "permission_missing";
            /** @description how many times it occurred (for `sitemap_other_host`: URLs ignored) */
            count: number;
            /** @description what happened and what to do about it, naming the URL or resource */
            message: string;
            /** @description the URL or resource the warning is about */
            subject: string;
        };
        KnowledgeBaseItem: {
            /** @description ISO 8601 UTC */
            created_at: string;
            id: string;
            /** @description `pending` until the chunks are embedded, then `indexed` (or `failed`) */
            indexing_status: string;
            /** @description `<type>_<object>` for integrations, `crawled_pages`, `uploaded_documents` */
            source_table_name: string;
            /** @description `integration`, `crawl` or `upload` */
            source_type: string;
            source_url: string;
            tags: string[];
            title: string;
            /** @description ISO 8601 UTC */
            updated_at: string;
            /** @description `public` or `private` */
            visibility: string;
        };
        KnowledgeBaseItemWithContent: {
            /** @description the full text (markdown or plain text) the item was stored with */
            content: string;
            /** @description ISO 8601 UTC */
            created_at: string;
            id: string;
            /** @description `pending` until the chunks are embedded, then `indexed` (or `failed`) */
            indexing_status: string;
            /** @description `<type>_<object>` for integrations, `crawled_pages`, `uploaded_documents` */
            source_table_name: string;
            /** @description `integration`, `crawl` or `upload` */
            source_type: string;
            source_url: string;
            tags: string[];
            title: string;
            /** @description ISO 8601 UTC */
            updated_at: string;
            /** @description `public` or `private` */
            visibility: string;
        };
        Pagination: {
            current_page: number;
            has_next_page: boolean;
            has_previous_page: boolean;
            items_per_page: number;
            total_items: number;
            total_pages: number;
        };
        SearchResult: {
            chunk_index: number;
            chunk_plain_text: string;
            /** @description cosine distance between the query and the chunk (0 = same direction) */
            distance: number;
            /** @description the chunk's vector in pgvector's text form, `[0.0123,-0.0456,...]` */
            embedding?: string;
            item_id: string;
            source_table_name: string;
            source_type: string;
            source_url: string;
            tags: string[];
            title: string;
            visibility: string;
        };
        SyncJob: {
            /** @description Runs so far; more than 1 after a worker died */
            attempts: number;
            /** @description Bytes received from the source */
            bytesSynced: number;
            connectionId: string;
            /** @description Unix epoch ms when it was queued */
            createdAt: number;
            /** @description Progress by document, updated with every committed batch while the job runs */
            documents: {
                /** @description Items removed: deleted at the source, or not seen by a completed reset */
                deleted: number;
                /** @description Documents that could not be synced (failureCount) */
                failed: number;
                /** @description Documents the source yielded as new or changed (unchanged ones it skips are not read) */
                seen: number;
                /** @description Of those, stored as new or changed items */
                stored: number;
                /** @description Of those, identical to the stored item (nothing written or embedded) */
                unchanged: number;
            };
            /** @description Milliseconds it ran (so far, while running) */
            duration: number;
            /** @description Why it failed (or, when incomplete, a summary of the failures) */
            error?: string;
            failureCount: number;
            /** @description Documents that could not be synced (first 100) */
            failures: {
                externalId?: string;
                message: string;
                retryable: boolean;
                /** @description The document's source_table_name, when the source said */
                table?: string;
            }[];
            finishedAt: number | null;
            /** @description Random integer up to 2^53 - 1, unique across the service; it carries no order (lists sort by creation) */
            jobId: number;
            /** @enum {string} */
            jobType: "sync" | "reset";
            /** @description Unix epoch ms */
            lastUpdatedAt: number;
            /** @description Documents created, updated or deleted */
            rowsSynced: number;
            /** @description Unix epoch ms when it started running (when queued, while pending) */
            startTime: number;
            /**
             * @description pending, running, succeeded, failed, cancelled or incomplete
             * @enum {string}
             */
            status: "pending" | "running" | "succeeded" | "failed" | "cancelled" | "incomplete";
            /** @enum {string} */
            trigger: "api" | "schedule";
            /** @description extension: warnings in all, those beyond the list included */
            warningCount: number;
            /** @description extension: problems a person can act on that did not fail the job, at most 50 distinct entries (10 of one code); a repeated one counts up its entry */
            warnings: components["schemas"]["JobWarning"][];
        };
        WebhookDelivery: {
            attempts: number;
            createdAt: string;
            deliveredAt: string | null;
            eventType: string;
            id: string;
            lastAttemptAt: string | null;
            lastError: string | null;
            lastStatusCode: number | null;
            /** @description the `webhook-id` header: the same on every attempt */
            messageId: string;
            /** @description ISO 8601 UTC; null unless pending */
            nextAttemptAt: string | null;
            /** @enum {string} */
            status: "pending" | "succeeded" | "failed";
        };
        WebhookEndpoint: {
            createdAt: string;
            description: string | null;
            disabledAt: string | null;
            /** @description why the service disabled the endpoint (every attempt failed for a day); null otherwise */
            disabledReason: string | null;
            enabled: boolean;
            /** @description the event types delivered; null: every type */
            events: string[] | null;
            /** @description ISO 8601 UTC of the first failed attempt since the last success; null while it answers */
            failingSince: string | null;
            id: string;
            url: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createOrganization: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        apiKey: string;
                        id: string;
                        name: string;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        apiKey: string;
                        id: string;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createConnection: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Extension: sync on a schedule. null removes the schedule; absent keeps the current one. */
                    schedule?: {
                        /** @description Sync every so many minutes (5 to 525600) */
                        intervalMinutes: number;
                    } | null;
                    /** @description Extension, OAuth sources (notes, support_desk) only: the secretId of the OAuth consent to use (default: the newest one, of the same subdomain for support_desk). */
                    secretId?: string;
                    source: {
                        /** @description Internal integration token; omit to use the token stored by the OAuth flow. */
                        access_token?: string;
                        /** @enum {string} */
                        type: "notes" | "notion";
                    } | ({
                        /** @description OAuth access token, in place of email and api_token; the OAuth consent flow fills it. */
                        access_token?: string;
                        /** @description Zendesk API token (with email). Zendesk stops accepting API tokens on 2027-04-30; OAuth (access_token) replaces them. */
                        api_token?: string;
                        /** @description Also sync other brands' help centers: `all` (every brand whose help center is live) or a list of brand subdomains (`["acme", "acme-pro"]`). Each item is tagged `brand:<subdomain>`. Absent: only the subdomain's own help center. */
                        brands?: "all" | string[];
                        /** @description E-mail of the agent or admin the API token belongs to (with api_token). */
                        email?: string;
                        /** @description Also sync solved and closed tickets, their public comments only, as private items. Default false. */
                        include_tickets?: boolean;
                        /** @description Account subdomain: `acme` or `acme.zendesk.com`. A name in another script is also taken (converted to its ASCII form). */
                        subdomain: string;
                        /** @enum {string} */
                        type: "support_desk" | "zendesk";
                    } | unknown | unknown) | {
                        /** @description Atlassian API token: classic, scoped (read:space:confluence, read:page:confluence) or a service account's. */
                        api_token: string;
                        /** @description Site host name: `acme` (meaning acme.atlassian.net), `acme.atlassian.net` or a custom domain. A name in another script is also taken (converted to its ASCII form). */
                        domain_name: string;
                        /** @description E-mail of the Atlassian account the API token belongs to (a service account's @serviceaccount.atlassian.com address). */
                        email: string;
                        /** @enum {string} */
                        type: "wiki" | "confluence";
                    } | ({
                        /** @description Admin API access token of the store (shpat_… of a legacy custom app), in place of client_id and client_secret; the OAuth consent flow fills it. */
                        access_token?: string;
                        /** @description Client ID of a Dev Dashboard app installed on your own store (with client_secret): the service gets its access tokens (valid about 24 hours) through the client credentials grant. */
                        client_id?: string;
                        /** @description Client secret of that app (with client_id), stored encrypted. */
                        client_secret?: string;
                        /** @description Store name: `acme` or `acme.myshopify.com`. A name in another script is also taken (converted to its ASCII form). */
                        shop: string;
                        /** @enum {string} */
                        type: "storefront" | "shopify";
                    } | unknown | unknown) | {
                        /** @description GitBook personal access token. */
                        access_token: string;
                        /** @description Id of the space to sync (from its URL: app.gitbook.com/s/<space_id>). */
                        space_id: string;
                        /** @enum {string} */
                        type: "docs_space" | "gitbook";
                    };
                    /**
                     * @description Extension: false leaves the first sync to you (POST /api/connect/run-sync). By default a new connection, or one that needed consent again and now has new credentials, starts syncing at once (`jobId` in the answer).
                     * @default true
                     */
                    sync?: boolean;
                } | {
                    source?: {
                        /** @enum {unknown} */
                        type?: "notes" | "notion" | "support_desk" | "zendesk" | "storefront" | "shopify";
                    };
                } | {
                    source?: {
                        /** @enum {unknown} */
                        type?: "wiki" | "docs_space" | "confluence" | "gitbook";
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        connectionId: string;
                        /** @description false when an existing connection got new credentials */
                        created: boolean;
                        /** @description Extension: the sync job queued with the connection (its first sync), absent when none was (`sync: false`, a rotation of working credentials, an inactive connection) */
                        jobId?: number;
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteConnection: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Id of the connection. Give this or type, not both. */
                    connectionId?: string;
                    /**
                     * @description Source type of the connection (`notes`, `support_desk`, ... or the product name). Give this or connectionId, not both.
                     * @enum {string}
                     */
                    type?: "notes" | "support_desk" | "wiki" | "storefront" | "docs_space" | "notion" | "zendesk" | "confluence" | "shopify" | "gitbook";
                } & (unknown | unknown);
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        cancelledJobs: number[];
                        connectionId: string;
                        deletedItems: number;
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listSyncJobs: {
        parameters: {
            query?: {
                /** @description Id of the connection. Give this or type, not both. */
                connectionId?: string;
                limit?: number;
                offset?: number;
                /** @description Source type of the connection (`notes`, `support_desk`, ... or the product name). Give this or connectionId, not both. */
                type?: "notes" | "support_desk" | "wiki" | "storefront" | "docs_space" | "notion" | "zendesk" | "confluence" | "shopify" | "gitbook";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["SyncJob"][];
                        next?: string;
                        previous?: string;
                        /** @description Jobs of the connection */
                        total: number;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listConnectionTypes: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["ConnectionType"][];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listConnections: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Connection"][];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listCrawls: {
        parameters: {
            query?: {
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["CrawlJob"][];
                        next?: string;
                        previous?: string;
                        /** @description the organization's crawl jobs */
                        total: number;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createCrawl: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description follow links to other sites (default false: only the start URL's site)
                     * @default false
                     */
                    allowExternalLinks?: boolean;
                    /** @description extension: ms between two request starts per host (default the operator's KB_CRAWL_DELAY_MS, 100; at least KB_CRAWL_MIN_DELAY_MS, 50, or KB_CRAWL_FAST_DELAY_MS on fast hosts). A robots.txt Crawl-delay, when larger, wins, and a host answering 429/503 or slowing down gets a wider gap */
                    delayMs?: number;
                    /**
                     * @description regular expressions (RE2 syntax) on the URL path; a matching page is skipped (wins over includes). A pattern that does not compile as RE2 is refused (400).
                     * @default []
                     */
                    excludePaths?: string[];
                    /**
                     * @description regular expressions (RE2 syntax) on the URL path; when given, only matching pages are kept. A pattern that does not compile as RE2 is refused (400).
                     * @default []
                     */
                    includePaths?: string[];
                    /**
                     * @description extension: make pages that are lists of links (indexes, tables of contents, sitemaps, tag pages: most of their text in links, little text a link) searchable too. By default they are stored and listed, and their links followed, but they are not chunked for search, where they would outrank the pages they list
                     * @default false
                     */
                    indexListPages?: boolean;
                    /**
                     * @description page budget: distinct pages stored at most (default 100, at most 10000); fetches that store nothing (404, non-HTML, duplicate, near-duplicate, noindex) do not count, and 3 x limit fetches end the crawl
                     * @default 100
                     */
                    limit?: number;
                    /** @description extension: requests in flight per host at most (default the operator's KB_CRAWL_CONCURRENCY, 2; at most KB_CRAWL_MAX_CONCURRENCY, 4, or KB_CRAWL_FAST_CONCURRENCY on hosts the operator lists in KB_CRAWL_FAST_HOSTS) */
                    maxConcurrency?: number;
                    /** @description extension: link depth from the start URL (0: the start page only); when set, sitemaps are not read */
                    maxDepth?: number;
                    /**
                     * @description extension: tags added to every crawled item; an item reached by several crawls carries all their tags, and a crawl removes none (a user's stay until a user changes them)
                     * @default []
                     */
                    tags?: string[];
                    /**
                     * Format: uri
                     * @description start URL (required): absolute http or https, at most 2,000 characters
                     */
                    url: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CrawlJob"];
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCrawl: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        allowExternalLinks: boolean;
                        /** @description ISO 8601 UTC when the job ended (completed, failed or cancelled); null before */
                        completed_at: string | null;
                        /** @description distinct pages stored so far (created, updated, retagged or unchanged): what `limit` counts; never above it */
                        completed_pages: number;
                        /** @description ISO 8601 UTC */
                        created_at: string;
                        /** @description extension: ms between request starts per host the crawl asked for; null: the host's default */
                        delayMs: number | null;
                        /** @description why the job failed; null unless `failed` */
                        error_message: string | null;
                        excludePaths: string[];
                        /** @description extension: fetches at most (3 x `limit`, at least `limit` + 10); the crawl ends there */
                        fetch_limit: number;
                        /** @description extension: URLs fetched so far, whatever they yielded */
                        fetched_pages: number;
                        /** @description job identifier */
                        id: string;
                        includePaths: string[];
                        /** @description extension: pages that are lists of links are searchable too (false: stored and listed, not chunked) */
                        indexListPages: boolean;
                        /** @description extension: items this crawl stored or updated that are not searchable yet (the indexer's queue); the crawl is fully searchable when the job has ended and this is 0 */
                        items_pending: number;
                        /** @description extension: the page budget: distinct pages stored at most (fetches that store nothing do not count) */
                        limit: number;
                        /** @description extension: requests in flight per host the crawl asked for; null: the host's default */
                        maxConcurrency: number | null;
                        /** @description extension: link depth limit; null for none */
                        maxDepth: number | null;
                        /** @description extension: finished pages by outcome: `created`, `updated`, `retagged` (same content, this crawl's tags added), `unchanged` (same content or 304, tags too), `removed` (404/410, item deleted), `gone`, `duplicate`, `near_duplicate`, `canonical` (its rel=canonical URL is the page stored), `not_html`, `noindex`, `empty`, `tombstoned`, `budget` (fetched after the limit was reached), `failed`, `blocked`... */
                        outcomes: {
                            [key: string]: number;
                        };
                        /** @description extension, for debugging: URLs not crawled or not stored, by reason (`excluded`, `not_included`, `robots`, `external`, `depth`, `budget` (not reached: the limit or the fetch cap ended the crawl), `not_html`, `duplicate`, `near_duplicate` (text nearly the same as a stored page of the host), `canonical` (stored under its rel=canonical URL), `noindex`, `empty`, `too_long`, `blocked`, `failed`, `pdf_encrypted`, `pdf_unreadable`, `pdf_too_large`), each with a count of distinct URLs and a few examples. The kept item of duplicates carries a `variants:N` tag: N pages of the crawl had its text. */
                        refused: {
                            [key: string]: {
                                count: number;
                                /** @description `duplicate`, `near_duplicate`, `canonical`: the URL each example stands for */
                                of?: {
                                    [key: string]: string;
                                };
                                sample: string[];
                            };
                        };
                        /** @description the owning project: the caller's organization id */
                        service_project_id: string;
                        /** @enum {string} */
                        status: "idle" | "scraping" | "completed" | "failed" | "cancelled";
                        /** @description extension: tags given to every crawled item */
                        tags: string[];
                        /** @description the caller's organization id */
                        tenant_id: string;
                        /** @description pages stored plus pages still queued or being fetched, never above `limit`; equal to `completed_pages` once the job ends */
                        total_pages: number;
                        /** @description ISO 8601 UTC */
                        updated_at: string;
                        /** @description the crawled start URL */
                        url: string;
                        /** @description extension: warnings in all, those beyond the list included */
                        warning_count: number;
                        /** @description extension: problems a person can act on that did not fail the job, at most 50 distinct entries (10 of one code); a repeated one counts up its entry */
                        warnings: components["schemas"]["JobWarning"][];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cancelCrawl: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CrawlJob"];
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateItems: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    id: string;
                    /** @description extension: replaces the item's tags */
                    tags?: string[];
                    title: string;
                    /**
                     * @description extension
                     * @enum {string}
                     */
                    visibility?: "public" | "private";
                }[];
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        notFound: string[];
                        success: boolean;
                        updated: number;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    uploadItem: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description markdown or plain text */
                    content: string;
                    /**
                     * Format: uri
                     * @description absolute http or https URL the document came from
                     */
                    source_url?: string;
                    /** @default [] */
                    tags?: string[];
                    title: string;
                    /**
                     * @default public
                     * @enum {string}
                     */
                    visibility?: "public" | "private";
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        item: components["schemas"]["KnowledgeBaseItem"];
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteItems: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    ids: string[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deleted: number;
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getItem: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        item: components["schemas"]["KnowledgeBaseItemWithContent"];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    queryItems: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description page size, 1-100 (default 20)
                     * @default 20
                     */
                    limit?: number;
                    /**
                     * @description page number from 1 (default 1)
                     * @default 1
                     */
                    page?: number;
                    /** @description case-insensitive match on title and content: the item contains the search text and every word of it begins a word of the item (a word finds longer words it begins; several words match as a phrase, the last a prefix; the inside of a word does not match). %, _, \ and quotes are ordinary characters */
                    search?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["KnowledgeBaseItem"][];
                        pagination: components["schemas"]["Pagination"];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    reembedItems: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Items set pending by this call */
                        marked: number;
                        /** @description The organization's items now waiting for the indexer (marked + already pending) */
                        pending: number;
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getItemStats: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemStats"];
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    oauthCallback: {
        parameters: {
            query: {
                code?: string;
                error?: string;
                error_description?: string;
                /** @description the signed state of POST /api/connect/oauth/initiate (single use, expires) */
                state: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        secretId: string;
                        success: boolean;
                    };
                };
            };
            /** @description The consent was started with a redirectUri: the browser goes back to it (Location), with `secretId` and `status` (`success`, or `error` with `error`, an error code) as query parameters. No body. */
            302: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    initiateOAuth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * Format: uri
                     * @description Where the browser is sent after the callback, with `secretId` and `status` (success|error) added.
                     */
                    redirectUri?: string;
                    /** @description Required for storefront: the account whose consent this is. A name in another script is also taken (converted to its ASCII form). */
                    shop?: string;
                    /** @description Required for support_desk: the account whose consent this is. A name in another script is also taken (converted to its ASCII form). */
                    subdomain?: string;
                    /** @enum {string} */
                    type: "notes" | "notion" | "support_desk" | "zendesk" | "storefront" | "shopify";
                } & ({
                    /** @enum {unknown} */
                    type?: "notes" | "notion";
                } | {
                    /** @enum {unknown} */
                    type?: "support_desk" | "zendesk";
                } | {
                    /** @enum {unknown} */
                    type?: "storefront" | "shopify";
                });
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        consentUrl: string;
                        /** @description Unix epoch ms after which the consent must be started again */
                        expiresAt: number;
                        secretId: string;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runSync: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Id of the connection. Give this or type, not both. */
                    connectionId?: string;
                    /**
                     * @description sync: what changed since the last sync; reset: re-read everything, remove what the source no longer has
                     * @default sync
                     * @enum {string}
                     */
                    jobType?: "sync" | "reset";
                    /**
                     * @description Source type of the connection (`notes`, `support_desk`, ... or the product name). Give this or connectionId, not both.
                     * @enum {string}
                     */
                    type?: "notes" | "support_desk" | "wiki" | "storefront" | "docs_space" | "notion" | "zendesk" | "confluence" | "shopify" | "gitbook";
                } & (unknown | unknown);
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobId: number;
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: string;
                        /** @description sync_in_progress: the job that is pending or running */
                        jobId?: number;
                        message: string;
                    };
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    secretIdExists: {
        parameters: {
            query: {
                secretId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        exists: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    setConnectionStatus: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Id of the connection. Give this or type, not both. */
                    connectionId?: string;
                    /**
                     * @description inactive: no syncs (scheduled or requested); items stay searchable
                     * @enum {string}
                     */
                    status: "active" | "inactive";
                    /**
                     * @description Source type of the connection (`notes`, `support_desk`, ... or the product name). Give this or connectionId, not both.
                     * @enum {string}
                     */
                    type?: "notes" | "support_desk" | "wiki" | "storefront" | "docs_space" | "notion" | "zendesk" | "confluence" | "shopify" | "gitbook";
                } & (unknown | unknown);
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        cancelledJobs: number[];
                        connectionId: string;
                        /** @enum {string} */
                        status: "active" | "inactive";
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookEndpoints: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        endpoints: components["schemas"]["WebhookEndpoint"][];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string;
                    events?: ("sync.started" | "sync.finished" | "crawl.finished" | "items.indexed" | "connection.needs_consent")[] | null;
                    /** Format: uri */
                    url: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        createdAt: string;
                        description: string | null;
                        disabledAt: string | null;
                        /** @description why the service disabled the endpoint (every attempt failed for a day); null otherwise */
                        disabledReason: string | null;
                        enabled: boolean;
                        /** @description the event types delivered; null: every type */
                        events: string[] | null;
                        /** @description ISO 8601 UTC of the first failed attempt since the last success; null while it answers */
                        failingSince: string | null;
                        id: string;
                        secret: string;
                        url: string;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        success: boolean;
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    description?: string | null;
                    enabled?: boolean;
                    events?: ("sync.started" | "sync.finished" | "crawl.finished" | "items.indexed" | "connection.needs_consent")[] | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                limit?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deliveries: components["schemas"]["WebhookDelivery"][];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    search: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description only chunks at most this cosine distance away */
                    cosineDistanceThreshold?: number;
                    /**
                     * @description extension: false leaves `embedding` out of the hits
                     * @default true
                     */
                    includeEmbedding?: boolean;
                    /**
                     * @description maximum number of results, 1-100 (default 10)
                     * @default 10
                     */
                    limit?: number;
                    /** @description extension: at most this many hits per item (1: one passage per page, the best); fewer than `limit` hits only when fewer items match */
                    maxPerItem?: number;
                    /**
                     * @description extension: `semantic` (default), `hybrid` (vector + keyword ranks fused), `keyword`
                     * @default semantic
                     * @enum {string}
                     */
                    mode?: "semantic" | "hybrid" | "keyword";
                    /** @description search text (required, at most 2,000 characters) */
                    query: string;
                    /** @description extension */
                    sourceTypes?: ("integration" | "crawl" | "upload")[];
                    /** @description an item matches when it carries at least one of these tags */
                    tags?: string[];
                    /** @description optional; must be the caller's organization id */
                    tenantId?: string;
                    /** @description extension: filter on item visibility */
                    visibility?: ("public" | "private")[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: components["schemas"]["SearchResult"][];
                    };
                };
            };
            /** @description Default Response */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Default Response */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        checks: {
                            [key: string]: string;
                        };
                        /** @description embedded mode (PGlite) only */
                        embedded?: {
                            ceiling: {
                                chunks: number;
                                items: number;
                            };
                            chunks: number;
                            items: number;
                            /** @description share >= 0.8: time to move to server mode (kb export-to-postgres) */
                            nearCeiling: boolean;
                            /** @description the larger of items and chunks as a share of the ceiling */
                            share: number;
                        };
                        status: string;
                    };
                };
            };
            /** @description Default Response */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        checks: {
                            [key: string]: string;
                        };
                        /** @description embedded mode (PGlite) only */
                        embedded?: {
                            ceiling: {
                                chunks: number;
                                items: number;
                            };
                            chunks: number;
                            items: number;
                            /** @description share >= 0.8: time to move to server mode (kb export-to-postgres) */
                            nearCeiling: boolean;
                            /** @description the larger of items and chunks as a share of the ceiling */
                            share: number;
                        };
                        status: string;
                    };
                };
            };
        };
    };
}
