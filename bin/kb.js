#!/usr/bin/env node
// The `kb` command. The source is TypeScript run by Node 24's type stripping; no build step.
const { main } = await import('../src/kb.ts');
await main(process.argv.slice(2));
