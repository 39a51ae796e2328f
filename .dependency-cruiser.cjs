/**
 * The layer rules of src/, checked by `npm run deps` (part of `npm test`): imports flow one way,
 *
 *   entry (src/*.ts: main, server, kb, compose, config, storage, embedding-runtime, worker-process)
 *     → http → jobs → crawler / ingest / search → connectors / embedding / db → net → lib
 *
 * Beside them, the surfaces people and agents use (src/cli/, src/mcp/, src/console/) reach the service only
 * through its public API, by the typed client (src/client/), which imports nothing of ours: entry and http
 * may mount them; nothing below http may import them. The surfaces (http included) never import one
 * another, and each entry file imports only the surface it starts; what two surfaces share lives below
 * them (src/client/ for what callers of the API share, src/lib/ otherwise).
 *
 * and nothing imports upward or in a circle (type-only imports included). A rule names what a folder may
 * NOT import; everything else that flows downward is allowed.
 */
const below = (...folders) => `^src/(${folders.join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle (type-only ones too) means two modules cannot be understood apart.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'entry-is-the-top',
      severity: 'error',
      comment:
        'The entry files (config, composition root, boot) build the parts; parts never reach back up. ' +
        'Only http may read the Config type.',
      from: {
        path: below('jobs', 'crawler', 'ingest', 'search', 'connectors', 'embedding', 'db', 'net', 'lib'),
      },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'http-only-from-entry',
      severity: 'error',
      comment: 'Nothing below the HTTP layer depends on it (routes call the parts, not the reverse).',
      from: {
        path: below('jobs', 'crawler', 'ingest', 'search', 'connectors', 'embedding', 'db', 'net', 'lib'),
      },
      to: { path: '^src/http/' },
    },
    {
      name: 'jobs-only-from-http-and-entry',
      severity: 'error',
      comment: 'The job engine runs the crawler and the sync runner; they never import it.',
      from: { path: below('crawler', 'ingest', 'search', 'connectors', 'embedding', 'db', 'net', 'lib') },
      to: { path: '^src/jobs/' },
    },
    {
      name: 'connectors-stay-pure',
      severity: 'error',
      comment:
        'Connectors are async generators over an HTTP client: they never touch the database, the job ' +
        'engine, the pipeline, the crawler, search or the embedding model.',
      from: { path: '^src/connectors/' },
      to: { path: below('db', 'http', 'jobs', 'ingest', 'crawler', 'search', 'embedding') },
    },
    {
      name: 'ingest-below-crawler',
      severity: 'error',
      comment: 'The pipeline takes documents from anywhere; it does not know the crawler or search.',
      from: { path: '^src/ingest/' },
      to: { path: below('crawler', 'search') },
    },
    {
      name: 'search-never-imports-ingest',
      severity: 'error',
      comment: 'Search reads chunks; it never reaches back into the pipeline that writes them.',
      from: { path: '^src/search/' },
      to: { path: below('ingest', 'crawler', 'connectors') },
    },
    {
      name: 'embedding-uses-net-and-lib',
      severity: 'error',
      comment: 'The embedding providers know nothing of storage, the pipeline or the sources.',
      from: { path: '^src/embedding/' },
      to: { path: below('crawler', 'ingest', 'search', 'connectors', 'db') },
    },
    {
      name: 'db-uses-lib',
      severity: 'error',
      comment:
        'The database layer (adapters, migrations, repositories) runs SQL; it never imports the job engine or HTTP.',
      from: { path: '^src/db/' },
      to: { path: below('crawler', 'ingest', 'search', 'connectors', 'embedding', 'net') },
    },
    {
      name: 'net-uses-lib-only',
      severity: 'error',
      from: { path: '^src/net/' },
      to: { path: below('http', 'jobs', 'crawler', 'ingest', 'search', 'connectors', 'embedding', 'db') },
    },
    {
      name: 'client-stands-alone',
      severity: 'error',
      comment: 'The typed client runs in Node and in the browser: npm packages only, nothing of ours.',
      from: { path: '^src/client/' },
      to: { path: '^src/(?!client/)' },
    },
    {
      name: 'surfaces-use-the-public-api',
      severity: 'error',
      comment:
        'The CLI, MCP server and console call the service through the typed client, never its parts ' +
        '(no private back doors).',
      from: { path: '^src/(cli|mcp|console)/' },
      to: {
        path: below('http', 'jobs', 'crawler', 'ingest', 'search', 'connectors', 'embedding', 'db', 'net'),
      },
    },
    {
      name: 'surfaces-stay-apart',
      severity: 'error',
      comment:
        'The CLI, MCP server and console are peers over the public API: none imports another, so each can ' +
        'change (or be removed) alone. What they share belongs in src/client/ (e.g. where the service is).',
      from: { path: '^src/(cli|mcp|console)/' },
      to: { path: '^src/(cli|mcp|console)/', pathNot: '^src/$1/' },
    },
    {
      name: 'http-hosts-only-the-mcp-server',
      severity: 'error',
      comment:
        'The HTTP layer serves the service; of the other surfaces it mounts one thing: the MCP server ' +
        '(mcp/server.ts) at /mcp, so agents reach MCP on the same port and key. The console is served as ' +
        'files (bundled for the browser, never imported), and the CLI and the stdio MCP transport are ' +
        'programs of their own.',
      from: { path: '^src/http/' },
      to: { path: '^src/(cli|console)/|^src/mcp/(?!server\\.ts$)' },
    },
    {
      name: 'cli-entry-starts-the-cli',
      severity: 'error',
      comment:
        'src/kb.ts is the `kb` program: it starts the CLI (src/cli/), and for `kb mcp` the MCP server on ' +
        'stdio, by that one entry point (mcp/stdio.ts). It never builds the HTTP layer itself (`kb serve` ' +
        'goes through server.ts) nor the browser console.',
      from: { path: '^src/kb\\.ts$' },
      to: { path: '^src/(http|console)/|^src/mcp/(?!stdio\\.ts$)' },
    },
    {
      name: 'server-entry-starts-http',
      severity: 'error',
      comment:
        'server.ts starts the HTTP service and compose.ts builds what the HTTP layer is handed: they reach ' +
        'the other surfaces only through http (which mounts MCP and serves the console), never directly.',
      from: { path: '^src/(server|compose)\\.ts$' },
      to: { path: '^src/(cli|mcp|console)/' },
    },
    {
      name: 'other-entries-start-no-surface',
      severity: 'error',
      comment:
        'The other top-level files (main, worker-process, config, storage, embedding-runtime, ' +
        'export-to-postgres) start no surface: the worker serves nothing, and a local command ' +
        '(export-to-postgres) throws its own error, which src/kb.ts turns into a usage error, rather than ' +
        'importing the CLI.',
      from: { path: '^src/[^/]+\\.ts$', pathNot: '^src/(kb|server|compose)\\.ts$' },
      to: { path: '^src/(cli|mcp|console|http)/' },
    },
    {
      name: 'surfaces-only-from-entry-and-http',
      severity: 'error',
      comment: 'The parts of the service never depend on the surfaces built over its API.',
      from: {
        path: below('jobs', 'crawler', 'ingest', 'search', 'connectors', 'embedding', 'db', 'net', 'lib'),
      },
      to: { path: '^src/(client|cli|mcp|console)/' },
    },
    {
      name: 'lib-imports-nothing-of-ours',
      severity: 'error',
      comment: 'lib/ is the bottom: npm packages and node built-ins only.',
      from: { path: '^src/lib/' },
      to: { path: '^src/(?!lib/)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
