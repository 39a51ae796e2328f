import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl } from '../../src/net/redact-url.ts';

describe('redactUrl', () => {
  it('keeps scheme, host, port and path; drops user info, query and fragment', () => {
    assert.equal(
      redactUrl('https://user:hunter2@api.example.com:8443/v1/items?api_key=secret&x=1#frag'),
      'https://api.example.com:8443/v1/items',
    );
    assert.equal(redactUrl(new URL('http://[::1]:4010/acme/x?token=t')), 'http://[::1]:4010/acme/x');
  });

  it('names a scheme it refuses instead of writing "null" for an opaque origin', () => {
    assert.equal(redactUrl('ftp://files.example.com/pub?x=1'), 'ftp://files.example.com/pub');
    assert.equal(redactUrl('file:///etc/passwd'), 'file:///etc/passwd');
  });

  it('answers a fixed text for what does not parse, never the input', () => {
    assert.equal(redactUrl('not a url ?token=secret'), '(invalid URL)');
    assert.equal(redactUrl('::', 'the URL'), 'the URL');
  });
});
