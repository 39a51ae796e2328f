/**
 * The source types a connection can be made for, with the fields each one's `source` takes, read from the
 * API's own description (the OpenAPI document the typed client is generated from, src/client/openapi.json,
 * which test/client/drift.test.ts keeps equal to the served one): the create-connection body's `source` is
 * one variant per type, `type` being the canonical name and the product's alias.
 */
import { z } from 'zod';
import apiDocument from '../client/openapi.json' with { type: 'json' };

const variantSchema = z.object({
  properties: z.record(z.string(), z.object({ description: z.string().optional() }).loose()),
  required: z.array(z.string()).default([]),
});

const documentSchema = z.object({
  paths: z.object({
    '/api/connect/connection': z.object({
      post: z.object({
        requestBody: z.object({
          content: z.object({
            'application/json': z.object({
              schema: z.object({
                properties: z.object({ source: z.object({ oneOf: z.array(variantSchema) }) }),
              }),
            }),
          }),
        }),
      }),
    }),
  }),
});

const typeSchema = z.object({ enum: z.tuple([z.string(), z.string()]) });

export interface SourceType {
  type: string;
  /** The product's name, accepted as `source.type` too. */
  alias: string;
  fields: Array<{ name: string; required: boolean; description: string }>;
}

let parsed: SourceType[] | undefined;

export function sourceTypes(): SourceType[] {
  parsed ??= documentSchema
    .parse(apiDocument)
    .paths['/api/connect/connection'].post.requestBody.content[
      'application/json'
    ].schema.properties.source.oneOf.map((variant) => {
      const [type, alias] = typeSchema.parse(variant.properties['type']).enum;
      const required = new Set(variant.required);
      return {
        type,
        alias,
        fields: Object.entries(variant.properties)
          .filter(([name]) => name !== 'type')
          .map(([name, field]) => ({
            name,
            required: required.has(name),
            description: field.description ?? '',
          })),
      };
    });
  return parsed;
}
