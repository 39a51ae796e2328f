/**
 * The checked-in OpenAPI document (src/client/openapi.json) is the one the service serves now, and the
 * client types (src/client/api-types.ts) are what openapi-typescript makes of it. A route whose schema
 * changed without `node scripts/client-types.ts` fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import {
  CLIENT_SPEC_FILE,
  CLIENT_TYPES_FILE,
  clientTypesFrom,
  servedSpec,
  specText,
} from '../../scripts/client-types.ts';

let served: object;
before(async () => {
  served = await servedSpec();
});

function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n');
  const e = expected.split('\n');
  const line = a.findIndex((l, i) => l !== e[i]);
  return `line ${line + 1}: ${JSON.stringify(a[line])}, served ${JSON.stringify(e[line])}`;
}

const REGENERATE = 'run `node scripts/client-types.ts`';

test('the checked-in OpenAPI document is the served one', () => {
  const actual = readFileSync(CLIENT_SPEC_FILE, 'utf8');
  const expected = specText(served);
  if (actual !== expected)
    assert.fail(`src/client/openapi.json is stale (${firstDifference(actual, expected)}); ${REGENERATE}`);
});

test('the client types are generated from the served document', async () => {
  const actual = readFileSync(CLIENT_TYPES_FILE, 'utf8');
  const expected = await clientTypesFrom(served);
  if (actual !== expected)
    assert.fail(`src/client/api-types.ts is stale (${firstDifference(actual, expected)}); ${REGENERATE}`);
});
