/**
 * The five connectors, the product-name aliases of their types, and the request schema of a source
 * input. Adding a source touches its own folder and one line here.
 */
import { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import { docsSpaceConnector, docsSpaceInputSchema } from './docs-space/index.ts';
import { notesConnector, notesInputSchema } from './notes/index.ts';
import { storefrontConnector, storefrontInputSchema } from './storefront/index.ts';
import { supportDeskConnector, supportDeskInputSchema } from './support-desk/index.ts';
import type { AnyConnector, SourceType } from './types.ts';
import { SOURCE_TYPES } from './types.ts';
import { wikiConnector, wikiInputSchema } from './wiki/index.ts';

export const connectors: Record<SourceType, AnyConnector> = {
  notes: notesConnector,
  support_desk: supportDeskConnector,
  wiki: wikiConnector,
  storefront: storefrontConnector,
  docs_space: docsSpaceConnector,
};

/** The products' own names, accepted as `source.type` and stored as the canonical stand-in. */
export const SOURCE_TYPE_ALIASES = {
  notion: 'notes',
  zendesk: 'support_desk',
  confluence: 'wiki',
  shopify: 'storefront',
  gitbook: 'docs_space',
} as const satisfies Record<string, SourceType>;
export type SourceTypeAlias = keyof typeof SOURCE_TYPE_ALIASES;

/** Every accepted `source.type` value: the five canonical types and their aliases. */
export const SOURCE_TYPE_VALUES = [
  ...SOURCE_TYPES,
  ...(Object.keys(SOURCE_TYPE_ALIASES) as SourceTypeAlias[]),
];

/** The canonical type of a type or alias (exact, lower-case spelling), or undefined when unknown. */
export function canonicalSourceType(value: string): SourceType | undefined {
  if ((SOURCE_TYPES as readonly string[]).includes(value)) return value as SourceType;
  if (Object.hasOwn(SOURCE_TYPE_ALIASES, value)) return SOURCE_TYPE_ALIASES[value as SourceTypeAlias];
  return undefined;
}

/** The connector of a type or alias; unknown: `AppError('invalid_request')` naming `type`. */
export function connectorFor(type: string): AnyConnector {
  const canonical = canonicalSourceType(type);
  if (!canonical) {
    throw new AppError('invalid_request', `type must be one of ${SOURCE_TYPE_VALUES.join(', ')}.`, {
      field: 'type',
    });
  }
  return connectors[canonical];
}

/** The `source` object of the create-connection request: one strict shape per type (aliases accepted). */
export const sourceInputSchema = z.discriminatedUnion('type', [
  notesInputSchema.extend({ type: z.enum(['notes', 'notion']) }),
  supportDeskInputSchema.extend({ type: z.enum(['support_desk', 'zendesk']) }),
  wikiInputSchema.extend({ type: z.enum(['wiki', 'confluence']) }),
  storefrontInputSchema.extend({ type: z.enum(['storefront', 'shopify']) }),
  docsSpaceInputSchema.extend({ type: z.enum(['docs_space', 'gitbook']) }),
]);
export type SourceInput = z.infer<typeof sourceInputSchema>;

/** A parsed source input, canonicalized and normalized: what is checked and then stored. */
export interface NormalizedSource {
  type: SourceType;
  connector: AnyConnector;
  /** The connector's normalized credentials (secret: store encrypted, never return or log). */
  credentials: Record<string, string>;
}

/**
 * Canonicalizes the type and normalizes the credential fields of a parsed `source`. Throws
 * `AppError('invalid_request')` naming the field (`source.subdomain` ...) when a value is refused.
 */
export function normalizeSourceInput(source: SourceInput): NormalizedSource {
  const { type, ...fields } = source;
  const connector = connectorFor(type);
  return { type: connector.type, connector, credentials: connector.normalize(fields) };
}
