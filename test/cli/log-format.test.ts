/**
 * On a terminal the service prints readable log lines (pino-pretty); piped or in
 * production they stay JSON; KB_LOG_FORMAT forces either. The start banner stands out from the lines.
 * The terminal is injected (isTTY), not a pseudo-terminal; the last tests start the real service.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { startBanner } from '../../src/lib/banner.ts';
import { chooseLogFormat, createProcessLogger } from '../../src/lib/logger.ts';
import { startEmbeddedService } from '../support/embedded-service.ts';

function capture(isTTY?: boolean): Writable & { text(): string; isTTY?: boolean } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      done();
    },
  }) as Writable & { text(): string; isTTY?: boolean };
  stream.text = () => text;
  if (isTTY !== undefined) stream.isTTY = isTTY;
  return stream;
}

const isJsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .every((line) => {
      try {
        return typeof JSON.parse(line).level === 'number';
      } catch {
        return false;
      }
    });

describe('log format', () => {
  test('auto is pretty on a terminal, JSON when piped or in production; json and pretty force it', () => {
    const cases: Array<[Parameters<typeof chooseLogFormat>, string]> = [
      [['auto', { isTTY: true, nodeEnv: undefined }], 'pretty'],
      [['auto', { isTTY: true, nodeEnv: 'development' }], 'pretty'],
      [['auto', { isTTY: false, nodeEnv: undefined }], 'json'],
      [['auto', { isTTY: true, nodeEnv: 'production' }], 'json'],
      [['json', { isTTY: true, nodeEnv: undefined }], 'json'],
      [['pretty', { isTTY: false, nodeEnv: 'production' }], 'pretty'],
    ];
    for (const [args, expected] of cases)
      assert.equal(chooseLogFormat(...args), expected, JSON.stringify(args));
  });

  test('the process logger on a terminal writes readable lines, still without secrets', () => {
    const secretToken = 'tok_5f1c9b7e2a4d4c0b9e1f';
    const secretCode = 'code_8a7b6c5d4e3f2a1b';
    const stream = capture();
    const log = createProcessLogger({
      level: 'info',
      format: 'auto',
      stream,
      isTTY: true,
      nodeEnv: undefined,
    });
    log.info(
      {
        connection: { api_token: secretToken },
        req: { method: 'GET', url: `/api/connect/oauth/callback?code=${secretCode}&x=1` },
      },
      'incoming request',
    );
    log.warn({ items: 3 }, 'took back indexing leases');
    const out = stream.text();
    assert.ok(!isJsonLines(out), `pretty, not JSON:\n${out}`);
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 2, 'one line per entry');
    assert.match(
      lines[0]!,
      /INFO.*incoming request GET \/api\/connect\/oauth\/callback\?code=\[redacted\]&x=1/,
    );
    assert.match(lines[1]!, /WARN.*took back indexing leases.*"items":3/);
    assert.match(out, /"api_token":"\[redacted\]"/, 'the redaction shows through the pretty printer');
    assert.ok(!out.includes(secretToken) && !out.includes(secretCode), 'no secret in the pretty output');
  });

  test('piped, in production, or forced json, the process logger writes JSON lines', () => {
    for (const opts of [
      { format: 'auto' as const, isTTY: false, nodeEnv: undefined },
      { format: 'auto' as const, isTTY: true, nodeEnv: 'production' },
      { format: 'json' as const, isTTY: true, nodeEnv: undefined },
    ]) {
      const stream = capture();
      createProcessLogger({ level: 'info', stream, ...opts }).info({ n: 1 }, 'hello');
      assert.ok(isJsonLines(stream.text()), `${JSON.stringify(opts)}: ${stream.text()}`);
    }
  });

  test('the banner: plain `kb:` lines beside JSON, a block between rules beside pretty lines; the key alone on its line', () => {
    const info = {
      url: 'http://127.0.0.1:8080',
      storage: 'pglite' as const,
      dataDir: './data',
      firstStartKey: 'kb_0123456789abcdef_secretsecretsecretsecretsecretse',
    };
    const plain = startBanner(info, { format: 'json', color: false }).trimEnd().split('\n');
    assert.equal(plain[0], 'kb: listening on http://127.0.0.1:8080 (storage: pglite, data: ./data)');
    assert.equal(plain.at(-1), info.firstStartKey);
    const block = startBanner(info, { format: 'pretty', color: false });
    const lines = block.split('\n');
    assert.equal(lines[0], '', 'a blank line before');
    assert.match(lines[1]!, /^━{20,}$/, 'a rule above');
    assert.ok(lines.includes(info.firstStartKey), 'the key alone on its line, nothing around it');
    assert.match(block, /kb: listening on http:\/\/127\.0\.0\.1:8080\n/);
    assert.match(block, /API docs\s+http:\/\/127\.0\.0\.1:8080\/docs/);
    assert.match(block, /console\s+http:\/\/127\.0\.0\.1:8080\/console/);
    // The next three commands: the key, a crawl followed until searchable, a search.
    assert.match(block, /export KB_API_KEY=<the key above>\n.*kb crawl \S+ --wait\n.*kb search /);
    assert.ok(plain.includes('kb: console at http://127.0.0.1:8080/console'));
    assert.match(block, /━\n\n$/, 'a rule and a blank line after');
    const colored = startBanner(info, { format: 'pretty', color: true });
    assert.ok(colored.includes('\u001b['), 'colour on a terminal that has it');
    assert.ok(
      !startBanner({ ...info, firstStartKey: null }, { format: 'pretty', color: false }).includes(
        'First start',
      ),
    );
  });
});

describe('the service as started (src/main.ts)', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const start = async (env: Record<string, string>) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kb-logfmt-'));
    dirs.push(dir);
    const s = await startEmbeddedService(dir, { KB_LOG_LEVEL: 'info', ...env });
    await fetch(`${s.url}/healthz`);
    // Health checks log at debug; a request of the API at info.
    await fetch(`${s.url}/api/connect/knowledgebase-items/stats`);
    s.child.kill('SIGTERM');
    await s.exited;
    return s.output();
  };

  test('piped, it writes JSON log lines and the plain banner', async () => {
    const out = await start({});
    const logLines = out.split('\n').filter((l) => l.startsWith('{'));
    assert.ok(logLines.length >= 3, out);
    assert.ok(isJsonLines(logLines.join('\n')), out);
    assert.match(out, /^kb: listening on http:\/\/127\.0\.0\.1:\d+ \(storage: pglite/m);
    assert.ok(!out.includes('━'), 'no block beside JSON lines');
  });

  test('with KB_LOG_FORMAT=pretty, readable lines and the framed banner with the first-start key', async () => {
    const out = await start({ KB_LOG_FORMAT: 'pretty' });
    assert.ok(!out.split('\n').some((l) => l.startsWith('{')), `no JSON line:\n${out}`);
    assert.match(out, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Server listening at http/m);
    assert.match(
      out,
      /INFO: request completed GET \/api\/connect\/knowledgebase-items\/stats 401 in \d+ ms #/,
    );
    assert.ok(!out.includes('/healthz'), 'health checks at debug');
    assert.match(out, /━{20,}\n {2}kb: listening on http/);
    assert.match(
      out,
      /\n(kb_[0-9a-f]{16}_[A-Za-z0-9_-]{32})\n\n {2}Next, in another terminal:\n[^━]*\n━/,
      'the first-start key alone on its line inside the block, the next commands after it',
    );
  });
});
