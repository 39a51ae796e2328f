/**
 * The README's first hour, run as printed: its "Quick start" and "A first useful run" blocks (the commands,
 * the MCP client configuration, the typed client example) and docs/mcp.md's configurations are read from
 * the pages themselves, by the `<!-- tested: <id> -->` marker above each, so a page cannot drift from what
 * works. Every block of those sections must be marked, every marker below must be there, and every command
 * a marked block runs needs an expectation here (its exit code and the shape of its output).
 *
 * Substitutions, only where the outside world or a choice of this machine is involved:
 * - the service listens on a free port (PORT=0): `127.0.0.1:8080` and `localhost:8080` become its address,
 *   and `./dev.sh kb` gets KB_URL (the CLI's documented setting) in place of the default port;
 * - `kb_...` is the key the first start printed;
 * - https://fastapi.tiangolo.com/ is its mirror (../shared/data/sites/fastapi-docs) served on loopback;
 * - the GitBook token and space id are the fake GitBook's (test/fakes/gitbook.ts), which the service
 *   reaches through KB_DOCS_SPACE_BASE_URL;
 * - `/path/to/checkout` is this checkout; `search.ts` is a file in a folder of its own under .cache/;
 * - https://kb.example.com (docs/mcp.md's HTTP configuration) is the service's origin.
 *
 * The service starts as the README says, `./dev.sh start`, with what the harness gives every service it
 * spawns: a data directory of its own, the fixture model (KB_MODEL_DIR: nothing is fetched), private
 * addresses allowed for the loopback sites. Commands run in a user's environment: none of the test run's
 * KB_* settings, and neither the checkout's Node 24 (.tools/) nor its node_modules/.bin on PATH, so
 * `./dev.sh` must bring Node 24 itself wherever the machine's `node` is older (this machine's is 20).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FASTAPI_DOCS } from '../http/crawl-helpers.ts';
import {
  type FakeGitbook,
  GITBOOK_DEFAULT_ITEMS,
  GITBOOK_GOOD_TOKEN,
  GITBOOK_SPACE_ID,
  startFakeGitbook,
} from '../fakes/gitbook.ts';
import { testModelDir } from '../support/model.ts';
import { type ServedSite, serveDirectory } from '../support/sites.ts';
import {
  type CodeBlock,
  codeBlocks,
  consoleTranscript,
  markedBlock,
  ROOT,
  shellCommands,
  substitute,
} from './markdown.ts';

/** The sections of each page whose blocks are all run, and the markers they must hold. */
const PAGES = {
  'README.md': {
    sections: ['Quick start', 'A first useful run'],
    markers: [
      'quick-start',
      'start',
      'crawl',
      'connect',
      'search',
      'http',
      'mcp-stdio-config',
      'typed-client',
      'typed-client-run',
    ],
  },
  'docs/mcp.md': { sections: [''], markers: ['mcp-stdio-config', 'mcp-http-config'] },
} as const;

const README = codeBlocks('README.md');
const MCP_DOC = codeBlocks('docs/mcp.md');
const readme = (id: string) => markedBlock(README, id, 'README.md');

/** A hit as `kb search` prints it (src/cli/search.ts), and the passage line under it. */
const HIT_LINE = /^1\. [0-2]\.\d{3} {2}\S.* {2}(crawl|integration|upload) {2}https?:\/\/\S+$/;
const PASSAGE_LINE = /^ {3}\S/;
const QUERY = 'how do I declare query parameters';

const TEST_RUN_SETTINGS = new Set(['DATABASE_URL', 'NODE_TEST_CONTEXT']);

/** A user's shell: the machine's PATH (no Node 24 of the checkout), no setting of the test run. */
function userEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(KB_|npm_)/.test(k) || TEST_RUN_SETTINGS.has(k)) continue;
    env[k] = v;
  }
  env['PATH'] = (process.env['PATH'] ?? '')
    .split(':')
    .filter((dir) => dir && !path.resolve(dir).startsWith(ROOT))
    .join(':');
  return env;
}

interface ShellRun {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one command line in bash in the checkout, as a user types it. */
function runShell(command: string, env: Record<string, string>): Promise<ShellRun> {
  const child = spawn('bash', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  // Only keeps a hung command from hanging the file; nothing asserts on time.
  const guard = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ command, code, stdout, stderr });
    });
  });
}

function describeRun(run: ShellRun): string {
  return `$ ${run.command}\nexit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
}

function json(run: ShellRun): Record<string, any> {
  assert.equal(run.code, 0, describeRun(run));
  try {
    return JSON.parse(run.stdout) as Record<string, any>;
  } catch {
    assert.fail(`not JSON:\n${describeRun(run)}`);
  }
}

/**
 * What each command of the README's `sh` blocks must do. A command with no entry fails the test: a new
 * command in the README needs its expectation here.
 */
const EXPECTATIONS: Array<{ command: RegExp; check(run: ShellRun): void }> = [
  { command: /^export KB_API_KEY=\S+$/, check: (run) => assert.equal(run.code, 0, describeRun(run)) },
  {
    command: /^\.\/dev\.sh kb crawl \S+ --limit (\d+) --wait$/,
    check(run) {
      assert.equal(run.code, 0, describeRun(run));
      const limit = /--limit (\d+)/.exec(run.command)![1];
      assert.match(run.stdout, /^crawl \S+ \(job [0-9a-f-]{36}\) completed in /m, describeRun(run));
      assert.match(run.stdout, new RegExp(`^ {2}pages +${limit} of limit ${limit}$`, 'm'), describeRun(run));
      assert.match(
        run.stdout,
        /^ {2}searchable every stored page$/m,
        `--wait ends searchable:\n${describeRun(run)}`,
      );
    },
  },
  {
    command: /^curl -s \S+\/api\/connect\/connection /,
    check(run) {
      const created = json(run);
      assert.deepEqual([created['success'], created['created']], [true, true], describeRun(run));
      assert.equal(typeof created['jobId'], 'number', `its first sync started:\n${describeRun(run)}`);
    },
  },
  {
    command: /^\.\/dev\.sh kb sync docs_space --wait$/,
    check(run) {
      assert.equal(run.code, 0, describeRun(run));
      assert.match(run.stdout, /^sync docs_space \(job \S+\) succeeded in /m, describeRun(run));
      const items = new RegExp(
        `^ {2}items +${GITBOOK_DEFAULT_ITEMS}/${GITBOOK_DEFAULT_ITEMS} searchable`,
        'm',
      );
      assert.match(run.stdout, items, describeRun(run));
    },
  },
  {
    command: /^curl -s \S+\/api\/consume\/search /,
    check(run) {
      const { result } = json(run);
      assert.equal(result?.length, 3, describeRun(run));
      for (const hit of result) assert.equal(typeof hit.chunk_plain_text, 'string');
    },
  },
  {
    command: /^curl -s \S+\/api\/connect\/knowledgebase-items\/query /,
    check(run) {
      const { items, pagination } = json(run);
      assert.equal(items?.length, 5, describeRun(run));
      assert.ok(pagination.total_items > 5, describeRun(run));
    },
  },
  {
    command: /^\.\/dev\.sh node \S+\.ts$/,
    check(run) {
      assert.equal(run.code, 0, describeRun(run));
      const lines = run.stdout.trim().split('\n');
      assert.equal(lines.length, 3, describeRun(run));
      for (const line of lines) assert.match(line, /^[0-2]\.\d{3} \S.* https?:\/\/\S+$/, describeRun(run));
    },
  },
];

/** The running service: `./dev.sh start`'s process (node, after dev.sh's exec) and what it printed. */
interface StartedService {
  child: ChildProcess;
  output: () => string;
  /** e.g. `127.0.0.1:43123`, from its `listening on` line. */
  address: string;
  key: string;
}

async function devShStart(env: Record<string, string>): Promise<StartedService> {
  const { command, shown } = consoleTranscript(readme('start').body);
  assert.equal(command, './dev.sh start');
  const child = spawn('bash', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const collect = (c: string) => {
    out += c;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 120_000;
  // Until the output holds every line the README shows (the key is the last one).
  for (;;) {
    if (transcriptMismatch(shown, out) === null) break;
    const ended = await Promise.race([exited.then(() => true), sleep(50).then(() => false)]);
    if (ended || Date.now() > deadline) {
      child.kill('SIGKILL');
      assert.fail(`./dev.sh start: ${transcriptMismatch(shown, out)}\n--- output\n${out}`);
    }
  }
  const address = /listening on http:\/\/(127\.0\.0\.1:\d+)/.exec(out)![1]!;
  const key = /^(kb_[0-9a-f]{16}_\S{32})$/m.exec(out)?.[1];
  assert.ok(key, `the first start prints the key alone on a line:\n${out}`);
  return { child, output: () => out, address, key };
}

/**
 * Null when every line the README shows is in the output, in order (other lines may come between: the
 * service's own log lines); else which shown line is missing. `...` as a line stands for any lines, and
 * inside a line for any text; the README's port 8080 stands for the port the service got.
 */
function transcriptMismatch(shown: string[], output: string): string | null {
  const lines = output.split('\n').map((l) => l.trimEnd());
  let at = 0;
  for (const expected of shown) {
    if (expected.trim() === '...' || expected.trim() === '') continue;
    const pattern = new RegExp(
      `^${expected
        .trim()
        .split('...')
        .map((part) =>
          part
            .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
            .replaceAll('127\\.0\\.0\\.1:8080', '127\\.0\\.0\\.1:\\d+'),
        )
        .join('.*')}$`,
    );
    const found = lines.findIndex((line, i) => i >= at && pattern.test(line.trim()));
    if (found < 0) return `the line the README shows, "${expected}", is not in the output`;
    at = found + 1;
  }
  return null;
}

describe('the README, run as printed', () => {
  const env = userEnv();
  let site: ServedSite;
  let gitbook: FakeGitbook;
  let dataDir: string;
  let scriptDir: string;
  let service: StartedService;
  let origin: string;
  /** The README's placeholders for this run (see the header). */
  let local: Array<readonly [string, string]>;

  before(async () => {
    site = await serveDirectory(FASTAPI_DOCS);
    gitbook = await startFakeGitbook();
    dataDir = mkdtempSync(path.join(tmpdir(), 'kb-readme-'));
    mkdirSync(path.join(ROOT, '.cache'), { recursive: true });
    scriptDir = mkdtempSync(path.join(ROOT, '.cache', 'readme-test-'));
    service = await devShStart({
      ...env,
      KB_DATA_DIR: dataDir,
      DATABASE_URL: '',
      PORT: '0',
      KB_MODEL_DIR: await testModelDir(),
      KB_CRAWL_ALLOW_PRIVATE: 'true',
      KB_DOCS_SPACE_BASE_URL: gitbook.url,
    });
    origin = `http://${service.address}`;
    env['KB_URL'] = origin;
    local = [
      ['kb_...', service.key],
      ['localhost:8080', `localhost:${service.address.split(':')[1]}`],
      ['127.0.0.1:8080', service.address],
    ];
  });
  after(async () => {
    if (service?.child.exitCode === null) {
      const exited = new Promise((resolve) => service.child.once('exit', resolve));
      service.child.kill('SIGTERM');
      await exited;
    }
    await site?.close();
    await gitbook?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (scriptDir) rmSync(scriptDir, { recursive: true, force: true });
  });

  /** Runs a marked `sh` block command by command, each checked by its expectation. */
  async function runShBlock(block: CodeBlock, pairs: Array<readonly [string, string]>): Promise<void> {
    assert.equal(block.lang, 'sh', `block "${block.id}" is a sh block`);
    const commands = shellCommands(substitute(block.body, pairs, `README's block "${block.id}"`));
    assert.ok(commands.length > 0);
    for (const command of commands) {
      const expectation = EXPECTATIONS.filter((e) => e.command.test(command));
      assert.equal(expectation.length, 1, `one expectation for the README's command: ${command}`);
      const run = await runShell(command, env);
      expectation[0]!.check(run);
      const exported = /^export (\w+)=(\S+)$/.exec(command);
      if (exported) env[exported[1]!] = exported[2]!;
    }
  }

  test('every block of the pages’ first-hour sections is marked, and every marker is there once', () => {
    for (const [page, { sections, markers }] of Object.entries(PAGES)) {
      const blocks = page === 'README.md' ? README : MCP_DOC;
      for (const block of blocks.filter((b) => (sections as readonly string[]).includes(b.section))) {
        assert.ok(block.id, `${page}:${block.line}: a block in "${block.section}" without a tested marker`);
      }
      assert.deepEqual(
        blocks.flatMap((b) => (b.id ? [b.id] : [])).sort(),
        [...markers].sort(),
        `${page}'s markers`,
      );
    }
    assert.deepEqual(
      [markedBlock(README, 'mcp-stdio-config', 'README.md').body],
      [markedBlock(MCP_DOC, 'mcp-stdio-config', 'docs/mcp.md').body],
      'the README and docs/mcp.md show the same stdio configuration',
    );
  });

  test('Quick start: exactly two commands, the service as run below and the suite as CI runs it', () => {
    const commands = shellCommands(readme('quick-start').body).map((c) => c.replace(/\s+#.*$/, ''));
    assert.deepEqual(commands, ['./dev.sh start', './dev.sh test']);
    assert.equal(consoleTranscript(readme('start').body).command, commands[0]);
    assert.match(
      readFileSync('.ci/run', 'utf8'),
      new RegExp(`^exec ${commands[1]!.replace('.', '\\.')}$`, 'm'),
    );
  });

  test('A first run: `./dev.sh start` on a machine with an older node prints what the README shows', () => {
    // devShStart waited for every line the README shows; the key line is the README's `kb_...`.
    assert.equal(transcriptMismatch(consoleTranscript(readme('start').body).shown, service.output()), null);
  });

  test('a first run: the crawl of the FastAPI docs, as printed', async () => {
    await runShBlock(readme('crawl'), [local[0]!, ['https://fastapi.tiangolo.com/', `${site.origin}/`]]);
  });

  test('a first run: connecting a GitBook space and following its sync, as printed', async () => {
    await runShBlock(readme('connect'), [
      ['localhost:8080', local[1]![1]],
      ['gb_api_...', GITBOOK_GOOD_TOKEN],
      ['"space_id": "..."', `"space_id": "${GITBOOK_SPACE_ID}"`],
    ]);
  });

  test('a first run: `kb search` prints hits as the README shows them', async () => {
    // `--wait` above ended when the pages were searchable: nothing is pending now.
    await everythingSearchable(origin, service.key, { waitMs: 0 });
    const { command, shown } = consoleTranscript(readme('search').body);
    assert.match(shown[0]!, HIT_LINE, "the README's hit line has the CLI's shape");
    assert.match(shown[1]!, PASSAGE_LINE, "the README's passage line has the CLI's shape");
    assert.ok(command.includes(QUERY));
    const run = await runShell(command, env);
    assert.equal(run.code, 0, describeRun(run));
    const lines = run.stdout.split('\n');
    assert.match(lines[0]!, HIT_LINE, describeRun(run));
    assert.match(lines[1]!, PASSAGE_LINE, describeRun(run));
    assert.equal(lines.filter((l) => /^\d+\. /.test(l)).length, 3, describeRun(run));
    assert.match(run.stdout, /Query Parameters/, `a useful answer:\n${describeRun(run)}`);
  });

  test('a first run: the same over HTTP with curl, as printed', async () => {
    await runShBlock(readme('http'), [local[1]!]);
  });

  for (const [page, blocks] of [
    ['README.md', README],
    ['docs/mcp.md', MCP_DOC],
  ] as const) {
    test(`${page}: the MCP client configuration starts \`kb mcp\` over stdio, as a client would`, async () => {
      const text = substitute(
        markedBlock(blocks, 'mcp-stdio-config', page).body,
        [['/path/to/checkout', ROOT.replace(/\/$/, '')], local[0]!, local[2]!],
        `${page}'s MCP configuration`,
      );
      const server = (JSON.parse(text) as McpConfig).mcpServers['kb']!;
      assert.ok(server.command && server.args, 'a stdio server: command and args');
      // A client starts the server from anywhere, with the machine's PATH (here: Node 20 first).
      const transport = new StdioClientTransport({
        command: server.command,
        args: server.args,
        env: { ...server.env, PATH: env['PATH']! },
        cwd: tmpdir(),
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (d) => {
        stderr += d;
      });
      await searchOverMcp(transport, () => stderr);
    });
  }

  test('docs/mcp.md: the HTTP configuration reaches /mcp with the key', async () => {
    const text = substitute(
      markedBlock(MCP_DOC, 'mcp-http-config', 'docs/mcp.md').body,
      [['https://kb.example.com', origin], local[0]!],
      "docs/mcp.md's HTTP configuration",
    );
    const server = (JSON.parse(text) as McpConfig).mcpServers['kb']!;
    assert.equal(server.type, 'http');
    const transport = new StreamableHTTPClientTransport(new URL(server.url!), {
      requestInit: { headers: server.headers ?? {} },
    });
    await searchOverMcp(transport, () => '');
  });

  test('the typed client example, saved in the checkout and run with `./dev.sh node`', async () => {
    const script = path.join(scriptDir, 'search.ts');
    writeFileSync(script, substitute(readme('typed-client').body, [local[2]!], "README's typed client"));
    await runShBlock(readme('typed-client-run'), [['search.ts', path.relative(ROOT, script)]]);
  });
});

interface McpConfig {
  mcpServers: Record<
    string,
    {
      command?: string;
      args?: string[];
      env?: Record<string, string>;
      type?: string;
      url?: string;
      headers?: Record<string, string>;
    }
  >;
}

/** Lists the tools and asks `search` the README's question; the answer holds hits. */
async function searchOverMcp(
  transport: StdioClientTransport | StreamableHTTPClientTransport,
  stderr: () => string,
): Promise<void> {
  const client = new Client({ name: 'readme-test', version: '1.0.0' });
  try {
    await client.connect(transport).catch((err: unknown) => {
      throw new Error(`the MCP client could not connect: ${String(err)}\n--- server stderr\n${stderr()}`);
    });
    const { tools } = await client.listTools();
    assert.ok(
      tools.some((t) => t.name === 'search'),
      tools.map((t) => t.name).join(', '),
    );
    const answer = await client.callTool({ name: 'search', arguments: { query: QUERY, limit: 3 } });
    const text = (answer.content as Array<{ type: string; text?: string }>)
      .map((c) => c.text ?? '')
      .join('\n');
    assert.notEqual(answer.isError, true, text);
    assert.match(text, /Query Parameters/, text);
  } finally {
    await client.close();
  }
}

/** Waits up to `waitMs` until none of the organization's items is pending (fails after that). */
async function everythingSearchable(origin: string, key: string, opts: { waitMs: number }): Promise<void> {
  const deadline = Date.now() + opts.waitMs;
  for (;;) {
    const res = await fetch(`${origin}/api/connect/knowledgebase-items/stats`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const stats = (await res.json()) as { total: number; byIndexingStatus: { pending: number } };
    if (res.ok && stats.total > 0 && stats.byIndexingStatus.pending === 0) return;
    if (Date.now() > deadline) assert.fail(`items still pending: ${JSON.stringify(stats)}`);
    await sleep(200);
  }
}
