/**
 * The registered connectors: adding a source is its own folder and one line in {@link registeredConnectors}.
 * Everything else about a source derives from its connector object: the accepted `source.type` values
 * (type and alias), the create-connection request schema (and so the OpenAPI shapes), the base-URL and
 * OAuth settings of the config, and the OAuth routes.
 */
import { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import { docsSpaceConnector } from './docs-space/index.ts';
import { notesConnector } from './notes/index.ts';
import { storefrontConnector } from './storefront/index.ts';
import { supportDeskConnector } from './support-desk/index.ts';
import type { AnyConnector, SourceType } from './types.ts';
import { wikiConnector } from './wiki/index.ts';

export const registeredConnectors: readonly AnyConnector[] = [
  notesConnector,
  supportDeskConnector,
  wikiConnector,
  storefrontConnector,
  docsSpaceConnector,
];

/** A parsed source input, canonicalized and normalized: what is checked and then stored. */
export interface NormalizedSource {
  type: SourceType;
  connector: AnyConnector;
  /** The connector's normalized credentials (secret: store encrypted, never return or log). */
  credentials: Record<string, unknown>;
}

/** Connectors by type and alias, and the request schemas they imply. Built once per service. */
export class SourceRegistry {
  readonly connectors: readonly AnyConnector[];
  readonly #byName = new Map<string, AnyConnector>();

  /** Later connectors replace earlier ones of the same type (tests put their own in a source's place). */
  constructor(connectors: readonly AnyConnector[]) {
    const byType = new Map<string, AnyConnector>();
    for (const c of connectors) {
      if (!/^[a-z][a-z0-9_]{0,63}$/.test(c.type))
        throw new Error(`invalid source type ${JSON.stringify(c.type)}`);
      byType.set(c.type, c);
    }
    this.connectors = [...byType.values()];
    for (const c of this.connectors) {
      for (const name of [c.type, c.alias]) {
        const taken = this.#byName.get(name);
        if (taken && taken !== c)
          throw new Error(`source name ${name} is declared by ${taken.type} and ${c.type}`);
        this.#byName.set(name, c);
      }
    }
  }

  /** Every accepted `source.type` value: the canonical types, then the aliases. */
  get typeValues(): [string, ...string[]] {
    const values = [...this.connectors.map((c) => c.type), ...this.connectors.map((c) => c.alias)];
    return values as [string, ...string[]];
  }

  /** The connector of a type or alias (exact, lower-case spelling), or undefined. */
  find(typeOrAlias: string): AnyConnector | undefined {
    return this.#byName.get(typeOrAlias);
  }

  /** The canonical type of a type or alias, or undefined when unknown. */
  canonicalType(typeOrAlias: string): SourceType | undefined {
    return this.find(typeOrAlias)?.type;
  }

  /** The connector of a type or alias; unknown: `AppError('invalid_request')` naming `type`. */
  get(typeOrAlias: string): AnyConnector {
    const connector = this.find(typeOrAlias);
    if (!connector) {
      throw new AppError('invalid_request', `type must be one of ${this.typeValues.join(', ')}.`, {
        field: 'type',
      });
    }
    return connector;
  }

  /** The `source` object of the create-connection request: one strict shape per type (aliases accepted). */
  inputSchema(): z.ZodType<{ type: string } & Record<string, unknown>> {
    const shapes = this.connectors.map((c) =>
      (c.credentials as z.ZodObject).extend({ type: z.enum([c.type, c.alias]) }),
    );
    const [first, ...rest] = shapes;
    if (!first) throw new Error('no connectors registered');
    return z.discriminatedUnion('type', [first, ...rest]) as unknown as z.ZodType<
      { type: string } & Record<string, unknown>
    >;
  }

  /**
   * Canonicalizes the type and normalizes the credential fields of a parsed `source`. Throws
   * `AppError('invalid_request')` naming the field (`source.subdomain` ...) when a value is refused.
   */
  normalize(source: { type: string } & Record<string, unknown>): NormalizedSource {
    const { type, ...fields } = source;
    const connector = this.get(type);
    return { type: connector.type, connector, credentials: connector.normalize(fields) };
  }

  /** Types and aliases of the sources that connect through OAuth consent. */
  oauthTypeValues(): string[] {
    return this.connectors.filter((c) => c.oauth).flatMap((c) => [c.type, c.alias]);
  }
}

/** The registry of the built-in connectors. */
export const defaultSourceRegistry = new SourceRegistry(registeredConnectors);
