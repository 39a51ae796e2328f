import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import {
  createOutboundFetch,
  isGlobalAddress,
  OutboundBlockedError,
  OutboundError,
  type Resolver,
} from '../../src/net/outbound.ts';
import { type ServedRoutes, serveRoutes } from '../support/sites.ts';

const UA = 'kb-connector-test/1.0 (+https://example.invalid/bot)';

async function isBlocked(p: Promise<unknown>, reason = 'address_not_allowed'): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof OutboundBlockedError, `expected OutboundBlockedError, got ${String(err)}`);
    assert.equal(err.reason, reason);
    return true;
  });
}

describe('isGlobalAddress', () => {
  const refused = [
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '224.0.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.10',
    '198.18.0.1',
    '::',
    '::1',
    '[::1]',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::7f00:1',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '64:ff9b::a00:1',
    '2002:a00:1::1',
    '2001:db8::1',
    'not-an-ip',
  ];
  const admitted = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'];
  for (const a of refused) it(`refuses ${a}`, () => assert.equal(isGlobalAddress(a), false));
  for (const a of admitted) it(`admits ${a}`, () => assert.equal(isGlobalAddress(a), true));
});

describe('createOutboundFetch', () => {
  let site: ServedRoutes;
  let v6: http.Server;
  let v6Hits = 0;
  let port = 0;

  before(async () => {
    site = await serveRoutes({
      '/': { body: '<p>hello</p>' },
      '/ua': (req, res) => {
        res.end(String(req.headers['user-agent']));
      },
      '/echo': (req, res) => {
        let data = '';
        req.on('data', (c) => {
          data += c;
        });
        req.on('end', () =>
          res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization ?? null, data })),
        );
      },
      '/redirect': (_req, res, ctx) => {
        res.writeHead(302, { location: `${ctx.origin}/` });
        res.end();
      },
      '/see-other': (_req, res) => {
        res.writeHead(303, { location: '/echo' });
        res.end();
      },
      '/loop': (_req, res) => {
        res.writeHead(301, { location: '/loop' });
        res.end();
      },
      '/to-file': (_req, res) => {
        res.writeHead(302, { location: 'file:///etc/passwd' });
        res.end();
      },
      '/huge': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let sent = 0;
        const pump = () => {
          while (sent < 200 && res.write(chunk)) sent++;
          if (sent >= 200) res.end();
          else res.once('drain', pump);
        };
        pump();
      },
      '/exact': { headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1000) },
      '/gzip': {
        headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
        body: gzipSync(Buffer.alloc(1024 * 1024, 'z')),
      },
      '/latin1': { headers: { 'content-type': 'text/plain; charset=iso-8859-1' }, body: Buffer.from([0xe9]) },
      '/json': { headers: { 'content-type': 'application/json' }, body: '{"a":1}' },
      '/hang': () => {
        // Never answers: the client's deadline must fire.
      },
      '/slow-body': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('start');
      },
    });
    port = Number(new URL(site.origin).port);
    v6 = http.createServer((_req, res) => {
      v6Hits++;
      res.end('v6');
    });
    await new Promise<void>((r) => v6.listen(0, '::1', r));
  });

  after(async () => {
    await site.close();
    v6.closeAllConnections();
    await new Promise((r) => v6.close(r));
  });

  const guarded = () => createOutboundFetch({ allowPrivate: false, userAgent: UA });
  const open = (extra: Partial<Parameters<typeof createOutboundFetch>[0]> = {}) =>
    createOutboundFetch({ allowPrivate: true, userAgent: UA, ...extra });

  it('reaches loopback when private targets are allowed, sending the user agent', async () => {
    const res = await open()(`${site.origin}/ua`);
    assert.equal(res.status, 200);
    assert.equal(res.text(), UA);
    assert.equal(res.redirected, false);
    const v6port = (v6.address() as AddressInfo).port;
    assert.equal((await open()(`http://[::1]:${v6port}/`)).text(), 'v6');
  });

  it('refuses every spelling of loopback, before any byte is sent', async () => {
    const fetch = guarded();
    const before = site.requests.length;
    const v6port = (v6.address() as AddressInfo).port;
    const hosts = [
      `127.0.0.1:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      `[::ffff:7f00:1]:${port}`,
      `2130706433:${port}`,
      `0x7f.1:${port}`,
      `017700000001:${port}`,
      `0x7f000001:${port}`,
      `127.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
    ];
    for (const host of hosts) await isBlocked(fetch(`http://${host}/`));
    await isBlocked(fetch(`http://[::1]:${v6port}/`));
    await isBlocked(fetch(`https://127.0.0.1:${port}/`));
    await isBlocked(fetch('http://169.254.169.254/latest/meta-data/'));
    await isBlocked(fetch('http://[fd00:ec2::254]/'));
    await isBlocked(fetch('http://10.0.0.1/'));
    assert.equal(site.requests.length, before);
    assert.equal(v6Hits, 1); // only the allowed request of the previous test
  });

  it('normalises numeric host forms to the loopback address (WHATWG parser)', () => {
    for (const h of ['2130706433', '0x7f.1', '017700000001', '0x7f000001', '127.1']) {
      assert.equal(new URL(`http://${h}/`).hostname, '127.0.0.1');
    }
    assert.equal(new URL('http://[::ffff:127.0.0.1]/').hostname, '[::ffff:7f00:1]');
  });

  it('refuses a DNS name that resolves to a private address (checked on the connecting socket)', async () => {
    const resolver: Resolver = async (name) => {
      if (name === 'innocent.example') return [{ address: '127.0.0.1', family: 4 }];
      throw Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    };
    const before = site.requests.length;
    await isBlocked(
      createOutboundFetch({ allowPrivate: false, userAgent: UA, lookup: resolver })(
        `http://innocent.example:${port}/`,
      ),
    );
    assert.equal(site.requests.length, before);
    // The same resolver is what the socket connects with: allowed, it reaches the loopback server.
    const ok = await createOutboundFetch({ allowPrivate: true, userAgent: UA, lookup: resolver })(
      `http://innocent.example:${port}/`,
    );
    assert.equal(ok.text(), '<p>hello</p>');
  });

  it('connects only to the allowed addresses of a name that resolves to mixed addresses', async () => {
    const resolver: Resolver = async () => [
      { address: '127.0.0.2', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const fetch = createOutboundFetch({
      allowPrivate: false,
      userAgent: UA,
      lookup: resolver,
      isAllowedAddress: (a) => a === '127.0.0.1',
    });
    assert.equal((await fetch(`http://mixed.example:${port}/`)).status, 200);
  });

  it('checks every redirect hop: an allowed target redirecting to a private one is refused', async () => {
    const inner = http.createServer((_req, res) => res.end('secret'));
    await new Promise<void>((r) => inner.listen(0, '127.0.0.2', r));
    const innerPort = (inner.address() as AddressInfo).port;
    let innerHits = 0;
    inner.on('request', () => innerHits++);
    const hop = await serveRoutes({
      '/ip': (_req, res) => {
        res.writeHead(302, { location: `http://127.0.0.2:${innerPort}/` });
        res.end();
      },
      '/name': (_req, res) => {
        res.writeHead(307, { location: `http://internal.example:${innerPort}/` });
        res.end();
      },
      '/mapped': (_req, res) => {
        res.writeHead(301, { location: `http://[::ffff:127.0.0.2]:${innerPort}/` });
        res.end();
      },
    });
    try {
      // The policy admits 127.0.0.1 only (standing in for "a public address") so 127.0.0.2 plays the
      // private network behind it.
      const fetch = createOutboundFetch({
        allowPrivate: false,
        userAgent: UA,
        isAllowedAddress: (a) => a === '127.0.0.1',
        lookup: async () => [{ address: '127.0.0.2', family: 4 }],
      });
      await isBlocked(fetch(`${hop.origin}/ip`));
      await isBlocked(fetch(`${hop.origin}/name`));
      await isBlocked(fetch(`${hop.origin}/mapped`));
      assert.equal(innerHits, 0);
      assert.equal(hop.requests.length, 3);
    } finally {
      await hop.close();
      inner.closeAllConnections();
      await new Promise((r) => inner.close(r));
    }
  });

  it('refuses non-http schemes, directly and on redirect', async () => {
    const fetch = open();
    await isBlocked(fetch('file:///etc/passwd'), 'scheme_not_allowed');
    await isBlocked(fetch('ftp://127.0.0.1/'), 'scheme_not_allowed');
    await isBlocked(fetch(`${site.origin}/to-file`), 'scheme_not_allowed');
  });

  it('follows redirects and reports the final URL; 303 turns POST into GET', async () => {
    const res = await open()(`${site.origin}/redirect`);
    assert.equal(res.url, `${site.origin}/`);
    assert.equal(res.redirected, true);
    assert.equal(res.text(), '<p>hello</p>');
    const posted = await open()(`${site.origin}/see-other`, { method: 'POST', body: 'x=1' });
    assert.deepEqual(posted.json(), { method: 'GET', auth: null, data: '' });
  });

  it('bounds redirects', async () => {
    const before = site.hits.get('/loop') ?? 0;
    await assert.rejects(open({ maxRedirects: 3 })(`${site.origin}/loop`), (err: unknown) => {
      assert.ok(err instanceof OutboundError);
      assert.equal(err.code, 'too_many_redirects');
      return true;
    });
    assert.equal((site.hits.get('/loop') ?? 0) - before, 4);
  });

  it('drops credentials when a redirect leaves the origin', async () => {
    const other = await serveRoutes({
      '/go': (_req, res) => {
        res.writeHead(307, { location: `${site.origin}/echo` });
        res.end();
      },
    });
    try {
      const res = await open()(`${other.origin}/go`, {
        method: 'POST',
        body: 'payload',
        headers: { Authorization: 'Bearer secret' },
      });
      assert.deepEqual(res.json(), { method: 'POST', auth: null, data: 'payload' });
      const direct = await open()(`${site.origin}/echo`, { headers: { authorization: 'Bearer t' } });
      assert.equal((direct.json() as { auth: string }).auth, 'Bearer t');
    } finally {
      await other.close();
    }
  });

  it('forwards only a safe list of headers when a redirect leaves the origin', async () => {
    const target = await serveRoutes({
      '/headers': (req, res) => {
        res.end(JSON.stringify(req.headers));
      },
    });
    const origin = await serveRoutes({
      '/go': (_req, res) => {
        res.writeHead(302, { location: `${target.origin}/headers` });
        res.end();
      },
      '/same': (_req, res) => {
        res.writeHead(302, { location: '/headers' });
        res.end();
      },
      '/headers': (req, res) => {
        res.end(JSON.stringify(req.headers));
      },
    });
    const headers = {
      'X-Shopify-Access-Token': 'shpat_secret',
      'x-api-key': 'k',
      cookie: 'c=1',
      'if-none-match': '"v1"',
      'if-modified-since': 'Tue, 01 Jan 2030 00:00:00 GMT',
      accept: 'application/json',
      'accept-language': 'en',
    };
    try {
      const away = (await open()(`${origin.origin}/go`, { headers })).json() as Record<string, string>;
      for (const h of [
        'x-shopify-access-token',
        'x-api-key',
        'cookie',
        'if-none-match',
        'if-modified-since',
      ]) {
        assert.equal(away[h], undefined, `${h} must not cross origins`);
      }
      assert.equal(away['accept'], 'application/json');
      assert.equal(away['accept-language'], 'en');
      assert.equal(away['user-agent'], UA);
      const same = (await open()(`${origin.origin}/same`, { headers })).json() as Record<string, string>;
      assert.equal(same['x-shopify-access-token'], 'shpat_secret', 'same-origin redirects keep the headers');
    } finally {
      await target.close();
      await origin.close();
    }
  });

  it('caps the body size and marks it truncated', async () => {
    const res = await open({ maxBytes: 10_000 })(`${site.origin}/huge`);
    assert.equal(res.body.length, 10_000);
    assert.equal(res.truncated, true);
    const perCall = await open()(`${site.origin}/huge`, { maxBytes: 100 });
    assert.equal(perCall.body.length, 100);
    const exact = await open({ maxBytes: 1000 })(`${site.origin}/exact`);
    assert.equal(exact.body.length, 1000);
    assert.equal(exact.truncated, false);
  });

  it('decodes compressed bodies and caps the decoded size', async () => {
    const full = await open()(`${site.origin}/gzip`);
    assert.equal(full.body.length, 1024 * 1024);
    assert.equal(full.truncated, false);
    const capped = await open({ maxBytes: 4096 })(`${site.origin}/gzip`);
    assert.equal(capped.body.length, 4096);
    assert.equal(capped.truncated, true);
  });

  it('decodes text in the declared charset and parses JSON', async () => {
    assert.equal((await open()(`${site.origin}/latin1`)).text(), 'é');
    assert.deepEqual((await open()(`${site.origin}/json`)).json(), { a: 1 });
  });

  it('times out when the server does not answer or stalls mid-body', async () => {
    // Both routes never finish answering: only the client's deadline can end these requests.
    for (const p of ['/hang', '/slow-body']) {
      await assert.rejects(open({ timeoutMs: 150 })(`${site.origin}${p}`), (err: unknown) => {
        assert.ok(err instanceof OutboundError, String(err));
        assert.equal(err.code, 'timeout');
        return true;
      });
    }
  });

  it("honours the caller's AbortSignal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await assert.rejects(open()(`${site.origin}/hang`, { signal: controller.signal }), /stop/);
  });

  it('reports connection failures as network errors', async () => {
    const closed = await serveRoutes({});
    const origin = closed.origin;
    await closed.close();
    await assert.rejects(open()(`${origin}/`), (err: unknown) => {
      assert.ok(err instanceof OutboundError);
      assert.equal(err.code, 'network');
      return true;
    });
  });
});
