import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKbClient as fromSource } from '../../src/client/index.ts';

test('the typed client is importable as kb-connector-service/client, the package’s own entry', async () => {
  const entry = await import('kb-connector-service/client');
  assert.equal(entry.createKbClient, fromSource, 'the same module as src/client');
  assert.equal(typeof entry.ok, 'function');
  const spec = await import('kb-connector-service/client/openapi.json', { with: { type: 'json' } });
  assert.match(spec.default.openapi, /^3\.1/);
});
