import { readFileSync } from 'node:fs';
import { chunkMarkdown } from './src/ingest/chunker.ts';
import { LocalEmbedder } from './src/embedding/local.ts';
import { testModelDir } from './test/support/model.ts';
const dir = await testModelDir();
const lines = readFileSync('/work/shared/data/scifact/corpus.jsonl', 'utf8').split('\n').filter(Boolean).slice(0, 200);
const docs = lines.map((l) => JSON.parse(l) as { title: string; text: string });
const cfgs = [{ quantized: true, batchSize: 1 }, { quantized: true, batchSize: 8 }, { quantized: true, batchSize: 32 }, { quantized: false, batchSize: 1 }, { quantized: false, batchSize: 32 }];
const es = await Promise.all(cfgs.map((c) => LocalEmbedder.load({ provider: 'local', modelDir: dir, ...c })));
const e0 = es[0]!;
const chunks = docs.flatMap((d) => chunkMarkdown({ title: d.title, markdown: d.text }, { maxTokens: 256, overlapTokens: 32, countTokens: (s) => e0.countTokens(s) }));
const full = chunks.filter((c) => e0.countTokens(c.embedText) >= 240).slice(0, 64).map((c) => c.embedText);
console.log('chunks', full.length, 'avg tokens', full.reduce((n, t) => n + e0.countTokens(t), 0) / full.length);
for (let round = 0; round < 2; round++) {
  for (const [i, e] of es.entries()) {
    await e.embed(full.slice(0, 2));
    const t = performance.now();
    await e.embed(full);
    console.log(round, JSON.stringify(cfgs[i]), (full.length / ((performance.now() - t) / 1000)).toFixed(1), 'chunks/s');
  }
}
