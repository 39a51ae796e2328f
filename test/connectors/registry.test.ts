import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertBaseUrlTemplate,
  baseUrlPlaceholders,
  joinUrl,
  pathSegment,
  resolveBaseUrl,
} from '../../src/connectors/base-url.ts';
import { defaultSourceRegistry as registry, SourceRegistry } from '../../src/connectors/registry.ts';
import { AppError } from '../../src/lib/errors.ts';

const SOURCE_TYPES = ['notes', 'support_desk', 'wiki', 'storefront', 'docs_space'];
const connectors = Object.fromEntries(registry.connectors.map((c) => [c.type, c]));
const canonicalSourceType = (v: string) => registry.canonicalType(v);
const sourceInputSchema = registry.inputSchema();

describe('registry', () => {
  it('has one connector per source type, each under its own type', () => {
    for (const type of SOURCE_TYPES) assert.equal(connectors[type]!.type, type);
    assert.equal(Object.keys(connectors).length, 5);
  });

  it('refuses two sources that declare the same name', () => {
    const notes = connectors['notes']!;
    assert.throws(() => new SourceRegistry([notes, { ...notes, type: 'notes_copy' }]), /notion/);
  });

  it('maps aliases to canonical types', () => {
    assert.equal(canonicalSourceType('zendesk'), 'support_desk');
    assert.equal(canonicalSourceType('notion'), 'notes');
    assert.equal(canonicalSourceType('confluence'), 'wiki');
    assert.equal(canonicalSourceType('shopify'), 'storefront');
    assert.equal(canonicalSourceType('gitbook'), 'docs_space');
    assert.equal(canonicalSourceType('wiki'), 'wiki');
    assert.equal(canonicalSourceType('toString'), undefined);
    assert.equal(canonicalSourceType('crawl'), undefined);
    assert.equal(registry.typeValues.length, 10);
    assert.throws(
      () => registry.get('slack'),
      (e: unknown) => e instanceof AppError && e.code === 'invalid_request',
    );
  });

  it('parses each shape, aliases included, and rejects unknown types and unknown fields', () => {
    const ok = [
      { type: 'notes' },
      { type: 'notion', access_token: 'secret_x' },
      { type: 'zendesk', subdomain: 'acme', email: 'a@acme.test', api_token: 't' },
      { type: 'wiki', domain_name: 'acme', email: 'a@acme.test', api_token: 't' },
      { type: 'shopify', shop: 'acme', access_token: 'shpat_x' },
      { type: 'docs_space', access_token: 'gb', space_id: 'abc' },
    ];
    for (const input of ok)
      assert.equal(sourceInputSchema.safeParse(input).success, true, JSON.stringify(input));
    const bad = [
      { type: 'slack' },
      { type: 'notes', extra: 1 },
      { type: 'support_desk', subdomain: 'acme', email: 'a@acme.test', include_tickets: 'yes' },
      {
        type: 'support_desk',
        subdomain: 'acme',
        email: 'a@acme.test',
        api_token: 't',
        base_url: 'http://evil',
      },
      { type: 'storefront', shop: 'acme', access_token: 42 },
      { type: 'docs_space', access_token: '', space_id: 'abc' },
      { subdomain: 'acme' },
    ];
    for (const input of bad)
      assert.equal(sourceInputSchema.safeParse(input).success, false, JSON.stringify(input));
  });

  it('normalizes a parsed source into its canonical type and credentials', () => {
    const parsed = sourceInputSchema.parse({
      type: 'zendesk',
      subdomain: 'Acme.zendesk.com',
      email: ' a@acme.test ',
      api_token: ' tok ',
    });
    const normalized = registry.normalize(parsed);
    assert.equal(normalized.type, 'support_desk');
    assert.equal(normalized.connector, connectors['support_desk']);
    assert.deepEqual(normalized.credentials, {
      subdomain: 'acme',
      email: 'a@acme.test',
      api_token: 'tok',
      include_tickets: false,
    });
    // The e-mail without its token (or the reverse) is refused when normalized, naming what is missing;
    // neither is allowed (the OAuth consent supplies the token).
    assert.throws(
      () =>
        registry.normalize(
          sourceInputSchema.parse({ type: 'support_desk', subdomain: 'acme', email: 'a@acme.test' }),
        ),
      (err: Error & { code?: string }) =>
        err.code === 'invalid_request' && /source\.api_token/.test(err.message),
    );
  });

  it('every connector declares a default base URL whose placeholders are credential fields', () => {
    const fields: Record<string, string[]> = {
      notes: [],
      support_desk: ['subdomain'],
      wiki: ['domain_name'],
      storefront: ['shop'],
      docs_space: [],
    };
    for (const type of SOURCE_TYPES) {
      assert.deepEqual(baseUrlPlaceholders(connectors[type]!.defaultBaseUrl), fields[type]);
      assertBaseUrlTemplate(connectors[type]!.defaultBaseUrl, fields[type]!);
    }
  });
});

describe('base URLs', () => {
  it('fills placeholders and drops a trailing slash', () => {
    assert.equal(
      resolveBaseUrl('https://{subdomain}.zendesk.com', { subdomain: 'acme' }),
      'https://acme.zendesk.com',
    );
    assert.equal(
      resolveBaseUrl('https://{domain_name}/', { domain_name: 'wiki.acme.com' }),
      'https://wiki.acme.com',
    );
    assert.equal(
      resolveBaseUrl('http://127.0.0.1:4010/{shop}/', { shop: 'acme' }),
      'http://127.0.0.1:4010/acme',
    );
    assert.equal(resolveBaseUrl('https://api.notion.com', {}), 'https://api.notion.com');
  });

  it('refuses values that are not host-safe, missing values and non-http templates', () => {
    const internal = (e: unknown) => e instanceof AppError && e.code === 'internal_error';
    assert.throws(() => resolveBaseUrl('https://{subdomain}.zendesk.com', {}), internal);
    for (const value of ['evil.com/', 'a@b', 'x:1', 'a b', '', '.', 'a/../b']) {
      assert.throws(
        () => resolveBaseUrl('https://{subdomain}.zendesk.com', { subdomain: value }),
        internal,
        value,
      );
    }
    assert.throws(() => resolveBaseUrl('ftp://{shop}.example', { shop: 'a' }), internal);
    assert.throws(() => resolveBaseUrl('https://u:p@api.example', {}), internal);
    assert.throws(() => assertBaseUrlTemplate('https://{tenant}.example.com', ['subdomain']), internal);
  });

  it('joins paths under the base path and encodes id segments', () => {
    assert.equal(joinUrl('http://h:1/acme', '/api/v2/users/me.json'), 'http://h:1/acme/api/v2/users/me.json');
    assert.equal(
      joinUrl('https://api.gitbook.com/', 'v1/user', { a: 1, b: [true, 'x y'] }),
      'https://api.gitbook.com/v1/user?a=1&b=true&b=x+y',
    );
    assert.equal(pathSegment('a/b?c'), 'a%2Fb%3Fc');
    assert.equal(pathSegment('..'), '%2E%2E');
  });
});
