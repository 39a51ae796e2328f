/**
 * The typed client's types (src/client/api-types.ts) are generated from the OpenAPI document the service
 * serves at /openapi.json, by openapi-typescript; the document itself is checked in beside them
 * (src/client/openapi.json), since types cannot show every change (a new maximum length, a new status).
 * Run this after changing a route's schema:
 *
 *   node scripts/client-types.ts
 *
 * test/client/drift.test.ts fails when the served document differs from either, so a schema change cannot
 * ship with a stale client.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const CLIENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/client');
export const CLIENT_TYPES_FILE = path.join(CLIENT_DIR, 'api-types.ts');
export const CLIENT_SPEC_FILE = path.join(CLIENT_DIR, 'openapi.json');

/** The checked-in document's text: stable key order as served, two-space indent, final newline. */
export function specText(spec: object): string {
  return `${JSON.stringify(spec, null, 2)}\n`;
}

const HEADER = `/**
 * Generated from the service's /openapi.json by openapi-typescript; do not edit.
 * Regenerate with \`node scripts/client-types.ts\` (test/client/drift.test.ts checks it is current).
 */
`;

/** The file's text for an OpenAPI document. */
export async function clientTypesFrom(spec: object): Promise<string> {
  // The document is passed as an object: openapi-typescript reads the schema, no network or file access.
  const ast = await openapiTS(spec as Parameters<typeof openapiTS>[0], { alphabetize: true });
  return HEADER + astToString(ast);
}

/** The OpenAPI document of a service composed on an in-memory database (the same routes as any deployment). */
export async function servedSpec(): Promise<object> {
  const { startTestApp } = await import('../test/support/harness.ts');
  const t = await startTestApp('pglite');
  try {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    return res.json() as object;
  } finally {
    await t.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = await servedSpec();
  writeFileSync(CLIENT_SPEC_FILE, specText(spec));
  writeFileSync(CLIENT_TYPES_FILE, await clientTypesFrom(spec));
  console.log(
    `wrote ${path.relative(process.cwd(), CLIENT_SPEC_FILE)} and ${path.relative(process.cwd(), CLIENT_TYPES_FILE)}`,
  );
}
