import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { defaultSourceRegistry } from '../../src/connectors/registry.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

/**
 * The interface the service was specified with (docs/api.md), path for path and field for field.
 * Each entry: method, path, request fields with JSON types, and response fields with JSON types.
 */
type JsonType = 'string' | 'number' | 'boolean' | 'array' | 'object';
interface SeedOp {
  method: string;
  path: string;
  request?: Record<string, JsonType>;
  response?: Record<string, JsonType>;
}

const SYNC_JOB: Record<string, JsonType> = {
  jobId: 'number',
  status: 'string',
  jobType: 'string',
  startTime: 'number',
  connectionId: 'string',
  lastUpdatedAt: 'number',
  duration: 'number',
  bytesSynced: 'number',
  rowsSynced: 'number',
};
const CRAWL_JOB: Record<string, JsonType> = {
  id: 'string',
  service_project_id: 'string',
  url: 'string',
  status: 'string',
  created_at: 'string',
  updated_at: 'string',
  completed_at: 'string',
  completed_pages: 'number',
  error_message: 'string',
  total_pages: 'number',
  tenant_id: 'string',
};
const ITEM: Record<string, JsonType> = {
  id: 'string',
  title: 'string',
  visibility: 'string',
  source_type: 'string',
  source_table_name: 'string',
  source_url: 'string',
};
const SEARCH_RESULT: Record<string, JsonType> = {
  title: 'string',
  source_url: 'string',
  visibility: 'string',
  distance: 'number',
  chunk_index: 'number',
  chunk_plain_text: 'string',
  source_type: 'string',
  source_table_name: 'string',
  embedding: 'string',
};
const PAGINATION: Record<string, JsonType> = {
  current_page: 'number',
  total_pages: 'number',
  total_items: 'number',
  items_per_page: 'number',
  has_next_page: 'boolean',
  has_previous_page: 'boolean',
};

const SEED: SeedOp[] = [
  {
    method: 'post',
    path: '/api/connect/connection',
    request: { source: 'object' },
    response: { success: 'boolean' },
  },
  { method: 'delete', path: '/api/connect/connection', response: { success: 'boolean' } },
  { method: 'patch', path: '/api/connect/set-connection-status', response: { success: 'boolean' } },
  { method: 'post', path: '/api/connect/run-sync', response: { success: 'boolean' } },
  {
    method: 'get',
    path: '/api/connect/connection-sync-jobs',
    response: { data: 'array', previous: 'string', next: 'string' },
  },
  {
    method: 'post',
    path: '/api/connect/crawling/',
    request: {
      url: 'string',
      limit: 'number',
      excludePaths: 'array',
      includePaths: 'array',
      allowExternalLinks: 'boolean',
    },
    response: CRAWL_JOB,
  },
  {
    method: 'post',
    path: '/api/consume/search',
    request: {
      limit: 'number',
      tenantId: 'string',
      query: 'string',
      tags: 'array',
      cosineDistanceThreshold: 'number',
    },
    response: { result: 'array' },
  },
  {
    method: 'post',
    path: '/api/connect/knowledgebase-items/query',
    request: { limit: 'number', page: 'number', search: 'string' },
    response: { items: 'array', pagination: 'object' },
  },
  { method: 'put', path: '/api/connect/knowledgebase-items', request: {} },
  { method: 'delete', path: '/api/connect/knowledgebase-items', request: { ids: 'array' } },
];

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
};

describe('OpenAPI document', () => {
  let t: TestApp;
  let spec: {
    openapi: string;
    paths: Record<string, Record<string, any>>;
    components?: { schemas?: Record<string, Schema> };
  };
  const deref = (s: Schema | undefined): Schema | undefined => {
    if (!s?.$ref) return s;
    const name = s.$ref.split('/').pop()!;
    return deref(spec.components?.schemas?.[name]);
  };
  const typesOf = (s: Schema | undefined): string[] => {
    const d = deref(s);
    if (!d) return [];
    if (d.anyOf || d.oneOf) return (d.anyOf ?? d.oneOf ?? []).flatMap(typesOf);
    return Array.isArray(d.type) ? d.type : d.type ? [d.type] : [];
  };
  const assertFields = (where: string, schema: Schema | undefined, fields: Record<string, JsonType>) => {
    const d = deref(schema);
    assert.ok(d, `${where}: no schema`);
    // An object's oneOf/anyOf beside its properties are rules between its fields, not variants.
    const variants = d.properties ? [d] : (d.anyOf ?? d.oneOf ?? [d]);
    for (const [name, type] of Object.entries(fields)) {
      const prop = variants.map((v) => deref(v)?.properties?.[name]).find(Boolean);
      assert.ok(prop, `${where}: field "${name}" missing`);
      const types = typesOf(prop).map((x) => (x === 'integer' ? 'number' : x));
      assert.ok(types.includes(type), `${where}: field "${name}" is ${types.join('|')}, seed says ${type}`);
    }
  };

  before(async () => {
    t = await startTestApp('pglite');
    const res = await t.call('GET', '/openapi.json', { key: null });
    assert.equal(res.status, 200);
    spec = res.body;
  });
  after(async () => t?.close());

  test('is OpenAPI 3.1 and lists every seed path with its fields and types', () => {
    assert.match(spec.openapi, /^3\.1/);
    for (const op of SEED) {
      const operation = spec.paths[op.path]?.[op.method];
      assert.ok(operation, `${op.method.toUpperCase()} ${op.path} missing from the spec`);
      if (op.request && Object.keys(op.request).length > 0) {
        assertFields(
          `${op.path} request`,
          operation.requestBody?.content?.['application/json']?.schema,
          op.request,
        );
      }
      if (op.response) {
        assertFields(
          `${op.path} response`,
          operation.responses?.['200']?.content?.['application/json']?.schema,
          op.response,
        );
      }
    }
  });

  test('is generator-ready: a unique operationId and a summary on every operation, 4XX answers on the API, servers, no unused components', () => {
    const ids: string[] = [];
    for (const [path, operations] of Object.entries(spec.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z]+$/, `${where}: operationId`);
        ids.push(op.operationId);
        assert.ok(op.summary, `${where}: summary`);
        if (path.startsWith('/api/'))
          assert.ok(
            Object.keys(op.responses).some((c) => c.startsWith('4')),
            `${where}: a 4XX answer`,
          );
      }
    }
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    // The 27 of the seed and its extensions, and the webhook endpoints and deliveries.
    assert.equal(ids.length, 32);
    assert.deepEqual((spec as { servers?: unknown }).servers, [{ url: '/', description: 'this service' }]);
    const text = JSON.stringify(spec.paths);
    const schemas = spec.components?.schemas ?? {};
    const components = JSON.stringify(schemas);
    for (const name of Object.keys(schemas)) {
      const ref = `"#/components/schemas/${name}"`;
      assert.ok(text.includes(ref) || components.includes(ref), `component ${name} is used`);
    }
  });

  test('nested seed objects keep their fields and types', () => {
    const item =
      spec.paths['/api/connect/knowledgebase-items/query']!['post'].responses['200'].content[
        'application/json'
      ].schema;
    const props = deref(item)!.properties!;
    assertFields('item', deref(props['items'])!.items, ITEM);
    assertFields('pagination', props['pagination'], PAGINATION);
    const search =
      spec.paths['/api/consume/search']!['post'].responses['200'].content['application/json'].schema;
    assertFields('search result', deref(deref(search)!.properties!['result'])!.items, SEARCH_RESULT);
    const jobs =
      spec.paths['/api/connect/connection-sync-jobs']!['get'].responses['200'].content['application/json']
        .schema;
    assertFields('sync job', deref(deref(jobs)!.properties!['data'])!.items, SYNC_JOB);
    const put =
      spec.paths['/api/connect/knowledgebase-items']!['put'].requestBody.content['application/json'].schema;
    assertFields('update entry', deref(put)!.items, { id: 'string', title: 'string' });
  });

  test('every source shape of create-connection is described with the seed field names', () => {
    const body = deref(
      spec.paths['/api/connect/connection']!['post'].requestBody.content['application/json'].schema,
    )!;
    const source = deref(body.properties!['source'])!;
    const variants = (source.anyOf ?? source.oneOf ?? []).map((v) => deref(v)!);
    const fieldsOf = (type: string) => {
      const v = variants.find((x) => {
        const t = deref(x.properties?.['type']) as { const?: string; enum?: string[] } | undefined;
        return t?.const === type || t?.enum?.includes(type);
      });
      assert.ok(v, `source type ${type} not described`);
      return Object.keys(v.properties ?? {}).sort();
    };
    // The seed's fields, plus the OAuth token, the opt-in for tickets (API.md "Later extensions") and the
    // brands to sync.
    assert.deepEqual(fieldsOf('support_desk'), [
      'access_token',
      'api_token',
      'brands',
      'email',
      'include_tickets',
      'subdomain',
      'type',
    ]);
    assert.deepEqual(fieldsOf('wiki'), ['api_token', 'domain_name', 'email', 'type']);
    assert.deepEqual(fieldsOf('storefront'), ['access_token', 'client_id', 'client_secret', 'shop', 'type']);
    assert.deepEqual(fieldsOf('docs_space'), ['access_token', 'space_id', 'type']);
    assert.ok(fieldsOf('notes').includes('type'));
  });

  test("each source's credential fields state the rule its connector applies", () => {
    const body = deref(
      spec.paths['/api/connect/connection']!['post'].requestBody.content['application/json'].schema,
    )!;
    const variants = (deref(body.properties!['source'])!.oneOf ?? []).map(
      (v) => deref(v)! as Schema & { anyOf?: unknown[] },
    );
    // A valid value of every credential field, so that one field at a time can be varied.
    const valid: Record<string, string> = {
      subdomain: 'acme',
      shop: 'acme',
      domain_name: 'acme',
      email: 'a@b.co',
      api_token: 'tok',
      access_token: 'tok',
      space_id: 'abc',
    };
    const samples = [
      '',
      ' ',
      '0',
      'acme',
      ' Acme.Zendesk.COM. ',
      'acme.myshopify.com',
      'a@b',
      'a@b.co',
      ' a.b+c@d-e.fg ',
      'a..b@c.de',
      'tok en',
      'tok\u0000',
      '\u00a0tok\u3000',
      '123',
      'a.123',
      'a.0x1f',
      '0x1f',
      'wiki.example.com.',
      'a_b-C',
      'a/b',
      'x'.repeat(64),
      'x'.repeat(4097),
      'https://acme.zendesk.com',
      'acme:443',
      'user@acme',
      '127.0.0.1',
      '[::1]',
      '-acme',
      'acme-',
    ];
    const desk = () =>
      variants.find((v) =>
        (deref(v.properties?.['type']) as { enum?: string[] })?.enum?.includes('support_desk'),
      )!;
    const generated = fc.sample(
      fc.string({ unit: fc.constantFrom(...'aZ09-._@+ x:/\t'.split('')), maxLength: 16 }),
      { numRuns: 3000, seed: 7 },
    );
    for (const connector of defaultSourceRegistry.connectors) {
      const variant = variants.find((v) =>
        (deref(v.properties?.['type']) as { enum?: string[] })?.enum?.includes(connector.type),
      );
      assert.ok(variant, `${connector.type}: no source shape`);
      const fields = Object.keys(
        (connector.credentials as unknown as { shape: Record<string, unknown> }).shape,
      );
      for (const field of fields.filter((f) => f in valid)) {
        const pattern: string | undefined = (variant.properties![field] as { pattern?: string }).pattern;
        assert.ok(
          pattern && pattern !== '^[^\\u0000]*$',
          `${connector.type}.${field}: the document states no rule (${pattern})`,
        );
        const base = Object.fromEntries(fields.filter((f) => f in valid).map((f) => [f, valid[f]]));
        const accepted = (value: string) => {
          try {
            connector.normalize({ ...base, [field]: value } as never);
            return true;
          } catch {
            return false;
          }
        };
        const regex: RegExp = new RegExp(pattern);
        for (const value of [...samples, ...generated]) {
          assert.equal(
            regex.test(value),
            accepted(value),
            `${connector.type}.${field} = ${JSON.stringify(value)}: the document and the connector disagree`,
          );
        }
      }
    }
    // OAuth initiate's account field is the same field with the same rule.
    const initiate = deref(
      spec.paths['/api/connect/oauth/initiate']!['post'].requestBody.content['application/json'].schema,
    )!;
    assert.equal(
      (initiate.properties!['subdomain'] as { pattern?: string }).pattern,
      (desk().properties!['subdomain'] as { pattern?: string }).pattern,
    );
    // support_desk takes email and api_token together or neither (the OAuth consent then supplies a token).
    assert.deepEqual(desk().anyOf, [
      { required: ['email', 'api_token'] },
      { not: { anyOf: [{ required: ['email'] }, { required: ['api_token'] }] } },
    ]);
  });

  test('the OAuth callback lists its redirect (302) beside its JSON answer', () => {
    const responses = spec.paths['/api/connect/oauth/callback']!['get'].responses;
    assert.deepEqual(Object.keys(responses).sort(), ['200', '302', '400', '500']);
    assert.match(responses['302'].description, /redirectUri.*secretId.*status/);
  });

  test('declares what the service enforces: integer ranges, URL formats, one-of rules, the text rule', () => {
    const params = (path: string) =>
      Object.fromEntries(
        (
          spec.paths[path]!['get'].parameters as Array<{
            name: string;
            schema: any;
            required?: boolean;
            description?: string;
          }>
        ).map((p) => [p.name, p]),
      );
    for (const path of ['/api/connect/crawling/', '/api/connect/connection-sync-jobs']) {
      const p = params(path);
      assert.deepEqual(p['limit']!.schema, { type: 'integer', minimum: 1, maximum: 100 }, path);
      assert.deepEqual(p['offset']!.schema, { type: 'integer', minimum: 0, maximum: 1_000_000 }, path);
    }
    const body = (path: string, method: string) =>
      deref(spec.paths[path]![method].requestBody.content['application/json'].schema) as any;
    for (const [path, method, field] of [
      ['/api/connect/crawling/', 'post', 'url'],
      ['/api/connect/knowledgebase-items', 'post', 'source_url'],
      ['/api/connect/oauth/initiate', 'post', 'redirectUri'],
    ] as const) {
      const schema = body(path, method).properties[field];
      assert.equal(schema.format, 'uri', `${path} ${field}`);
      const pattern = new RegExp(schema.pattern);
      assert.ok(
        pattern.test('https://docs.example.com/a%20b?x=1#top') && pattern.test('http://127.0.0.1:8080/'),
        field,
      );
      assert.ok(!pattern.test('ftp://example.com/') && !pattern.test('https://example.com/a b'), field);
    }
    const oneOfTypeOrId = { oneOf: [{ required: ['type'] }, { required: ['connectionId'] }] };
    for (const [path, method] of [
      ['/api/connect/connection', 'delete'],
      ['/api/connect/set-connection-status', 'patch'],
      ['/api/connect/run-sync', 'post'],
    ] as const) {
      assert.deepEqual(body(path, method).oneOf, oneOfTypeOrId.oneOf, `${method} ${path}`);
    }
    assert.match(params('/api/connect/connection-sync-jobs')['connectionId']!.description ?? '', /not both/);
    // The account field (subdomain) is required for the sources whose consent is per account, refused for the others.
    const initiate = body('/api/connect/oauth/initiate', 'post');
    const zendesk = initiate.oneOf.find((b: any) => b.properties.type.enum.includes('support_desk'));
    assert.deepEqual(zendesk.required, ['subdomain']);
    const notes = initiate.oneOf.find((b: any) => b.properties.type.enum.includes('notes'));
    assert.deepEqual(notes.not, { anyOf: [{ required: ['subdomain'] }, { required: ['shop'] }] });
    const shopify = initiate.oneOf.find((b: any) => b.properties.type.enum.includes('storefront'));
    assert.deepEqual(shopify.required, ['shop']);
    // The callback needs its state.
    const callback = spec.paths['/api/connect/oauth/callback']!['get'].parameters.find(
      (p: any) => p.name === 'state',
    );
    assert.equal(callback.required, true);
    // Every request string without a pattern of its own carries the text rule; the document says it.
    assert.equal(
      body('/api/connect/knowledgebase-items', 'post').properties.content.pattern,
      '^[^\\u0000]*$',
    );
    assert.equal(params('/api/connect/secret-id-exists')['secretId']!.schema.pattern, '^[^\\u0000]*$');
    // Trimmed text that must not be blank says so, the text rule kept.
    for (const schema of [
      body('/api/consume/search', 'post').properties.query,
      body('/api/connect/knowledgebase-items', 'post').properties.title,
      deref(body('/api/connect/knowledgebase-items', 'post').properties.tags)!.items as any,
    ]) {
      const notBlank = new RegExp(schema.pattern);
      assert.ok(
        notBlank.test(' a ') && !notBlank.test(' \t\u3000') && !notBlank.test('a\u0000'),
        schema.pattern,
      );
    }
    assert.match(
      (spec as any).info.description,
      /without U\+0000.*not UTF-8.*refused with 400 invalid_request naming the field/s,
    );
    assert.match((spec as any).info.description, /405 method_not_allowed and an `Allow` header/);
  });

  test('a docs page renders it', async () => {
    const res = await t.call('GET', '/docs/', { key: null });
    assert.equal(res.status, 200);
    assert.match(String(res.body), /swagger-ui/i);
  });
});
