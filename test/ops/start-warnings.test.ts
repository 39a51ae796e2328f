import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startEmbeddedService } from '../support/embedded-service.ts';

test('the service names a misspelt KB_ setting at start, with the setting it likely means', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'kb-start-warnings-'));
  const service = await startEmbeddedService(dataDir, { KB_NOTION_BASE_URL: 'http://127.0.0.1:9' });
  try {
    assert.match(
      service.output(),
      /KB_NOTION_BASE_URL is not a setting and is ignored; did you mean KB_NOTES_BASE_URL\?/,
    );
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    await rm(dataDir, { recursive: true, force: true });
  }
});
