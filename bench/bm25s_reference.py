"""BM25 reference for bench/scifact.ts: bm25s (pinned in bench/scifact.ts) on the same SciFact files.

    python bench/bm25s_reference.py DATA_DIR OUT.json [K1 B]

Indexes title + " " + text of every abstract (BEIR's convention), with bm25s' English stop words and the
Snowball English stemmer (PyStemmer), method "lucene" (bm25s' default), and writes, for every test query,
its top 100 document ids best first. bench/scifact.ts scores them with the same nDCG@10 as ours.
"""

import json
import sys
import time

import bm25s
import Stemmer

data, out = sys.argv[1], sys.argv[2]
k1 = float(sys.argv[3]) if len(sys.argv) > 3 else 1.2
b = float(sys.argv[4]) if len(sys.argv) > 4 else 0.75

corpus = [json.loads(line) for line in open(f"{data}/corpus.jsonl", encoding="utf8")]
queries = [json.loads(line) for line in open(f"{data}/queries.jsonl", encoding="utf8")]
stemmer = Stemmer.Stemmer("english")
started = time.perf_counter()
tokens = bm25s.tokenize([f"{d['title']} {d['text']}" for d in corpus], stopwords="en", stemmer=stemmer, show_progress=False)
retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
retriever.index(tokens, show_progress=False)
index_s = time.perf_counter() - started
ids = [d["_id"] for d in corpus]
result = {}
started = time.perf_counter()
for q in queries:
    qt = bm25s.tokenize([q["text"]], stopwords="en", stemmer=stemmer, show_progress=False)
    if not qt.vocab:
        result[q["_id"]] = []
        continue
    docs, _scores = retriever.retrieve(qt, k=100, show_progress=False)
    result[q["_id"]] = [ids[i] for i in docs[0]]
query_s = time.perf_counter() - started
json.dump({"version": bm25s.__version__, "k1": k1, "b": b, "index_s": index_s, "query_ms": 1000 * query_s / len(queries), "ranked": result}, open(out, "w"))
