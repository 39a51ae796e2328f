import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.ts';

/**
 * The seed interface (../shared/seed/service-interface.md), path for path and field for field.
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
  { method: 'post', path: '/api/connect/connection', request: { source: 'object' }, response: { success: 'boolean' } },
  { method: 'delete', path: '/api/connect/connection', response: { success: 'boolean' } },
  { method: 'patch', path: '/api/connect/set-connection-status', response: { success: 'boolean' } },
  { method: 'post', path: '/api/connect/run-sync', response: { success: 'boolean' } },
  { method: 'get', path: '/api/connect/connection-sync-jobs', response: { data: 'array', previous: 'string', next: 'string' } },
  {
    method: 'post',
    path: '/api/connect/crawling/',
    request: { url: 'string', limit: 'number', excludePaths: 'array', includePaths: 'array', allowExternalLinks: 'boolean' },
    response: CRAWL_JOB,
  },
  {
    method: 'post',
    path: '/api/consume/search',
    request: { limit: 'number', tenantId: 'string', query: 'string', tags: 'array', cosineDistanceThreshold: 'number' },
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
  let spec: { openapi: string; paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } };
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
    const variants = d.anyOf ?? d.oneOf ?? [d];
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
        assertFields(`${op.path} request`, operation.requestBody?.content?.['application/json']?.schema, op.request);
      }
      if (op.response) {
        assertFields(`${op.path} response`, operation.responses?.['200']?.content?.['application/json']?.schema, op.response);
      }
    }
  });

  test('nested seed objects keep their fields and types', () => {
    const item = spec.paths['/api/connect/knowledgebase-items/query']!['post'].responses['200'].content['application/json'].schema;
    const props = deref(item)!.properties!;
    assertFields('item', deref(props['items'])!.items, ITEM);
    assertFields('pagination', props['pagination'], PAGINATION);
    const search = spec.paths['/api/consume/search']!['post'].responses['200'].content['application/json'].schema;
    assertFields('search result', deref(deref(search)!.properties!['result'])!.items, SEARCH_RESULT);
    const jobs = spec.paths['/api/connect/connection-sync-jobs']!['get'].responses['200'].content['application/json'].schema;
    assertFields('sync job', deref(deref(jobs)!.properties!['data'])!.items, SYNC_JOB);
    const put = spec.paths['/api/connect/knowledgebase-items']!['put'].requestBody.content['application/json'].schema;
    assertFields('update entry', deref(put)!.items, { id: 'string', title: 'string' });
  });

  test('every source shape of create-connection is described with the seed field names', () => {
    const body = deref(spec.paths['/api/connect/connection']!['post'].requestBody.content['application/json'].schema)!;
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
    // The seed's fields, plus the OAuth token and the opt-in for tickets (API.md "Later extensions").
    assert.deepEqual(fieldsOf('support_desk'), ['access_token', 'api_token', 'email', 'include_tickets', 'subdomain', 'type']);
    assert.deepEqual(fieldsOf('wiki'), ['api_token', 'domain_name', 'email', 'type']);
    assert.deepEqual(fieldsOf('storefront'), ['access_token', 'shop', 'type']);
    assert.deepEqual(fieldsOf('docs_space'), ['access_token', 'space_id', 'type']);
    assert.ok(fieldsOf('notes').includes('type'));
  });

  test('the OAuth callback lists its redirect (302) beside its JSON answer', () => {
    const responses = spec.paths['/api/connect/oauth/callback']!['get'].responses;
    assert.deepEqual(Object.keys(responses).sort(), ['200', '302', '400', '500']);
    assert.match(responses['302'].description, /redirectUri.*secretId.*status/);
  });

  test('a docs page renders it', async () => {
    const res = await t.call('GET', '/docs/', { key: null });
    assert.equal(res.status, 200);
    assert.match(String(res.body), /swagger-ui/i);
  });
});
