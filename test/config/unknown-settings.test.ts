import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig, unknownSettingWarning } from '../../src/config.ts';

test('a KB_ variable no setting reads is reported, with the setting it likely misspells', () => {
  const config = loadConfig({
    KB_NOTION_BASE_URL: 'http://127.0.0.1:9999',
    KB_LOG_LEVLE: 'debug',
    KB_SOMETHING_ELSE_ENTIRELY: '1',
    KB_LOG_LEVEL: 'warn',
    KB_URL: 'http://127.0.0.1:8080',
    KB_TEST_FILE_TIMEOUT_S: '600',
  });
  assert.deepEqual(config.unknownSettings, [
    { name: 'KB_LOG_LEVLE', likely: 'KB_LOG_LEVEL' },
    { name: 'KB_NOTION_BASE_URL', likely: 'KB_NOTES_BASE_URL' },
    { name: 'KB_SOMETHING_ELSE_ENTIRELY', likely: undefined },
  ]);
  assert.equal(
    unknownSettingWarning(config.unknownSettings[1]!),
    'KB_NOTION_BASE_URL is not a setting and is ignored; did you mean KB_NOTES_BASE_URL?',
  );
  assert.match(unknownSettingWarning(config.unknownSettings[2]!), /not a setting and is ignored/);
});

test('known settings, the CLI’s variables and the test driver’s are not reported', () => {
  const config = loadConfig({ KB_WORKERS: '1', KB_API_KEY: 'kb_x', KB_TEST_CONCURRENCY: '2', PORT: '0' });
  assert.deepEqual(config.unknownSettings, []);
});
