/**
 * The OpenAPI document the service serves at /openapi.json (and its UI at /docs): generated from the
 * routes' zod schemas, with a stable operationId per operation, the text rule declared on every request
 * string, and only the components the operations use, so that generators get a clean contract.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { App } from './context.ts';
import { mcpPathItem } from './mcp-openapi.ts';
import { operationIdOf } from './operation-ids.ts';
import { NO_NUL_PATTERN, TEXT_RULE } from './text-guard.ts';

/** The OpenAPI document (served at /openapi.json) and its browsable UI at /docs. */
export async function registerOpenApi(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Knowledge-base connector service',
        version: '1.0.0',
        description:
          'Connect content sources, crawl websites, and search the resulting knowledge base. ' +
          'Every /api route except the OAuth callback and the admin API takes `Authorization: Bearer <api key>`.\n\n' +
          `Text: ${TEXT_RULE} Every request string in this document declares it as \`pattern: ${NO_NUL_PATTERN}\`.\n\n` +
          'Methods: a path answers a method it does not list with 405 method_not_allowed and an `Allow` header, ' +
          'and OPTIONS with 204 and `Allow`; a path that does not exist is 404 not_found.',
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key of your organization (`kb_...`).',
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'KB_ADMIN_TOKEN (admin API only).' },
        },
      },
      security: [{ apiKey: [] }],
      // Relative: the document describes the service that serves it, wherever it runs.
      servers: [{ url: '/', description: 'this service' }],
    },
    transform: withOperationId,
    transformObject: (document) =>
      withoutUnusedComponents(
        withTextRule(
          withoutSingleAlternatives(withMcp(jsonSchemaTransformObject(document) as OpenApiDocument)),
        ),
      ),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
}

/** zod's schema transform, plus the route's stable operationId (operation-ids.ts). */
const withOperationId: typeof jsonSchemaTransform = (input) => {
  const out = jsonSchemaTransform(input);
  const method = [input.route.method].flat()[0] ?? '';
  if ((input.schema as { hide?: boolean } | undefined)?.hide || !DOCUMENTED_METHODS.has(method)) return out;
  return { ...out, schema: { ...out.schema, operationId: operationIdOf(method, input.url) } };
};

const DOCUMENTED_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** `/mcp`, whose route carries no schema for the document to be generated from (mcp-openapi.ts). */
function withMcp(document: OpenApiDocument): OpenApiDocument {
  return { ...document, paths: { ...document.paths, '/mcp': mcpPathItem() } };
}

/**
 * `{anyOf: [x]}` (or oneOf, allOf) of one alternative becomes `x`: the same rule, which linters do not
 * flag as an illogical composition (a rule built from a list, e.g. "none of these fields", can have one).
 */
function withoutSingleAlternatives(document: OpenApiDocument): OpenApiDocument {
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value).map(([key, v]) => [key, visit(v)] as const);
    const keys = entries.map(([key]) => key);
    if (keys.length === 1 && ['anyOf', 'oneOf', 'allOf'].includes(keys[0]!)) {
      const alternatives = entries[0]![1];
      if (Array.isArray(alternatives) && alternatives.length === 1) return alternatives[0];
    }
    return Object.fromEntries(entries);
  };
  return { ...document, paths: visit(document.paths) as OpenApiDocument['paths'] };
}

/**
 * Drops the component schemas no operation refers to (directly or through another component): zod's
 * transform registers an input and an output variant of each named schema, and a generator would emit
 * types nobody uses.
 */
function withoutUnusedComponents(document: OpenApiDocument): OpenApiDocument {
  const schemas = (document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas;
  if (!schemas) return document;
  const used = new Set<string>();
  const refsOf = (value: unknown): string[] => {
    const text = JSON.stringify(value) ?? '';
    return [...text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  };
  const pending = refsOf(document.paths);
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (used.has(name)) continue;
    used.add(name);
    pending.push(...refsOf(schemas[name]));
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
  return document;
}

type JsonSchema = { [keyword: string]: unknown };
interface OpenApiDocument {
  paths?: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ schema?: JsonSchema }>;
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
      }
    >
  >;
  [key: string]: unknown;
}

/**
 * Declares the text rule (text-guard.ts) where the service enforces it: every string a request carries
 * (parameters and bodies, at any depth) gets `pattern: ^[^\u0000]*$`, unless it has a pattern, an enum
 * or a constant of its own. A generator reading the document then knows a NUL is refused. (That a lone
 * surrogate is refused needs no declaring: JSON Schema strings are Unicode text.)
 */
function withTextRule(document: OpenApiDocument): OpenApiDocument {
  const visit = (schema: unknown): void => {
    if (schema === null || typeof schema !== 'object') return;
    if (Array.isArray(schema)) {
      for (const s of schema) visit(s);
      return;
    }
    const s = schema as JsonSchema;
    const types = Array.isArray(s['type']) ? s['type'] : [s['type']];
    if (
      types.includes('string') &&
      s['pattern'] === undefined &&
      s['enum'] === undefined &&
      s['const'] === undefined
    ) {
      s['pattern'] = NO_NUL_PATTERN;
    }
    for (const key of ['items', 'additionalProperties', 'not', 'allOf', 'anyOf', 'oneOf', 'prefixItems'])
      visit(s[key]);
    if (s['properties'] && typeof s['properties'] === 'object')
      for (const p of Object.values(s['properties'])) visit(p);
  };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const op of Object.values(operations)) {
      for (const p of op.parameters ?? []) visit(p.schema);
      for (const media of Object.values(op.requestBody?.content ?? {})) visit(media.schema);
    }
  }
  return document;
}
