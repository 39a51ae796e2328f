import { readFileSync } from 'node:fs';
import { chunkMarkdown } from './src/ingest/chunker.ts';
import { LocalEmbedder } from './src/embedding/local.ts';
import { testModelDir } from './test/support/model.ts';
const dir = await testModelDir();
for (const quantized of [true, false]) {
  const t0 = performance.now();
  const e = await LocalEmbedder.load({ provider: 'local', modelDir: dir, quantized });
  console.log(e.modelId, 'load ms', (performance.now() - t0).toFixed(0), 'loadMs', e.loadMs.toFixed(0));
  // 256-token chunks from the SciFact corpus
  const lines = readFileSync('/work/shared/data/scifact/corpus.jsonl', 'utf8').split('\n').filter(Boolean).slice(0, 400);
  const docs = lines.map((l) => JSON.parse(l) as { title: string; text: string });
  const t1 = performance.now();
  const chunks = docs.flatMap((d) => chunkMarkdown({ title: d.title, markdown: d.text }, { maxTokens: 256, overlapTokens: 32, countTokens: (s) => e.countTokens(s) }));
  const chunkMs = performance.now() - t1;
  const full = chunks.filter((c) => e.countTokens(c.embedText) >= 200).slice(0, 96);
  const avg = full.reduce((n, c) => n + e.countTokens(c.embedText), 0) / full.length;
  await e.embed(full.slice(0, 4).map((c) => c.embedText));
  const t2 = performance.now();
  await e.embed(full.map((c) => c.embedText));
  const s = (performance.now() - t2) / 1000;
  console.log(`${e.modelId}: chunked ${docs.length} docs -> ${chunks.length} chunks in ${chunkMs.toFixed(0)} ms; embedded ${full.length} chunks (avg ${avg.toFixed(0)} tokens) at ${(full.length / s).toFixed(1)} chunks/s`);
  await e.close();
}
