import { z } from 'zod';
import type { AnyConnector } from '../../connectors/types.ts';
import type { App, RouteDeps } from '../context.ts';
import { commonErrors } from '../schemas.ts';

/**
 * Field names whose values are secrets: the console (and any form built from this list) masks them and
 * never echoes them. Every credential field of the registered sources that holds a secret is a token.
 */
const SECRET_FIELD = /token|secret|password/i;

const fieldSchema = z.object({
  name: z.string().describe('The field of `source` in POST /api/connect/connection'),
  label: z.string().describe('What a form calls the field (`API token` for `api_token`)'),
  kind: z.enum(['string', 'boolean']),
  required: z.boolean(),
  secret: z.boolean().describe('A credential to mask in forms (tokens)'),
  description: z.string(),
});

const connectionTypeSchema = z
  .object({
    type: z.string().describe('Canonical source type (`source.type`)'),
    alias: z.string().describe("The product's name, accepted as `source.type` too"),
    label: z.string().describe('The product behind the type'),
    fields: z.array(fieldSchema).describe("The source's own fields, in the order it declares them"),
    oauth: z
      .object({
        tenantField: z
          .string()
          .nullable()
          .describe(
            'The field POST /api/connect/oauth/initiate needs besides `type` (each account runs its own consent)',
          ),
        configured: z.boolean().describe("Whether the operator set up this source's OAuth app"),
      })
      .nullable()
      .describe('Sources that connect through OAuth consent; null for the others'),
  })
  .meta({ id: 'ConnectionType' });

/** Words shown in capitals in a field's label. */
const ACRONYMS = new Set(['api', 'id', 'url', 'oauth']);

/**
 * What a form calls a field: the title the connector declares for it, else its name in words
 * (`api_token` → `API token`, `space_id` → `Space ID`).
 */
function labelOf(name: string, title: unknown): string {
  if (typeof title === 'string' && title.trim() !== '') return title;
  const words = name.split('_').map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w));
  const [first = '', ...rest] = words;
  return [first.charAt(0).toUpperCase() + first.slice(1), ...rest].join(' ');
}

/** A connector's declared input fields, as a form needs them (from its zod schema, the one the route parses). */
function fieldsOf(connector: AnyConnector): z.infer<typeof fieldSchema>[] {
  const json = z.toJSONSchema(connector.credentials as z.ZodType, {
    io: 'input',
    unrepresentable: 'any',
  }) as {
    properties?: Record<string, { type?: unknown; title?: unknown; description?: unknown }>;
    required?: string[];
  };
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, prop]) => ({
    name,
    label: labelOf(name, prop.title),
    kind: prop.type === 'boolean' ? 'boolean' : 'string',
    required: required.has(name),
    secret: SECRET_FIELD.test(name),
    description: typeof prop.description === 'string' ? prop.description : '',
  }));
}

/**
 * Extension: the source types this service connects, each with the fields its create-connection input
 * takes and whether it connects through OAuth, so a form (the console's) is built from what the service
 * declares rather than a copy of it. The same for every organization.
 */
export function register(app: App, deps: RouteDeps): void {
  const data = deps.sources.registry.connectors.map((c) => ({
    type: c.type,
    alias: c.alias,
    label: c.label,
    fields: fieldsOf(c),
    oauth: c.oauth
      ? {
          tenantField: c.oauth.tenant?.field ?? null,
          configured: deps.config.sources[c.type]?.oauthApp !== undefined,
        }
      : null,
  }));
  app.get(
    '/api/connect/connection-types',
    {
      schema: {
        tags: ['connections'],
        summary: 'List the source types and their fields (extension)',
        description:
          'Each source type with the `source` fields of POST /api/connect/connection (name, label, kind, required, ' +
          'secret, description) and, for OAuth sources, the field the consent needs and whether it is configured.',
        querystring: z.strictObject({}),
        response: { 200: z.object({ data: z.array(connectionTypeSchema) }), ...commonErrors },
      },
    },
    async () => ({ data }),
  );
}
