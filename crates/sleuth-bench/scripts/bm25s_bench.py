"""bm25s baseline for `bm25-bench run`: same corpus, same queries, method="lucene",
k1=0.9, b=0.4, Lucene's English stop words and PyStemmer's English (Snowball) stemmer.

Prints one `RESULT {json}` line per phase, like the Rust phases. Query latency is
measured on bm25s's retrieval of already tokenized queries (its query tokenization is
left out, which favours bm25s); throughput uses bm25s's own `n_threads`.

Usage: python3 bm25s_bench.py CORPUS.jsonl QUERIES.txt [--passes 3] [--threads 2]
"""

import argparse
import json
import os
import resource
import time

import bm25s
import numpy as np
import Stemmer

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, as in our analyzer.
LUCENE_STOP = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into",
    "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then",
    "there", "these", "they", "this", "to", "was", "will", "with",
]


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def emit(obj):
    obj["loadavg"] = os.getloadavg()[0]
    print("RESULT " + json.dumps(obj), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("queries")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    stemmer = Stemmer.Stemmer("english")
    started = time.perf_counter()
    texts = []
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                texts.append(" ".join([d.get("title", "")] + d.get("sentences", [])))
    tokens = bm25s.tokenize(texts, stopwords=LUCENE_STOP, stemmer=stemmer, show_progress=False)
    del texts
    retriever = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    retriever.index(tokens, show_progress=False)
    del tokens
    emit({"engine": "bm25s", "phase": "build", "seconds": time.perf_counter() - started,
          "peak_rss_mib": peak_mib(), "docs": int(retriever.scores["num_docs"])})

    with open(args.queries, encoding="utf-8") as f:
        queries = [q.rstrip("\n") for q in f if q.strip()]
    qtok = [bm25s.tokenize(q, stopwords=LUCENE_STOP, stemmer=stemmer, show_progress=False,
                           return_ids=False)[0] for q in queries]
    vocab = retriever.vocab_dict
    qtok = [[t for t in q if t in vocab] or ["@@empty@@"] for q in qtok]
    qtok = [q for q in qtok if q != ["@@empty@@"]]

    def one(q):
        retriever.retrieve([q], k=10, show_progress=False, n_threads=1)

    for q in qtok:
        one(q)
    lat = []
    for _ in range(args.passes):
        for q in qtok:
            t = time.perf_counter()
            one(q)
            lat.append((time.perf_counter() - t) * 1e3)
    lat = np.sort(np.array(lat))
    t = time.perf_counter()
    for _ in range(args.passes):
        retriever.retrieve(qtok, k=10, show_progress=False, n_threads=args.threads)
    wall = time.perf_counter() - t
    emit({"engine": "bm25s", "phase": "query",
          "p50_ms": float(np.percentile(lat, 50)), "p99_ms": float(np.percentile(lat, 99)),
          "mean_ms": float(lat.mean()), "qps": len(qtok) * args.passes / wall,
          "threads": args.threads, "queries": len(qtok), "passes": args.passes,
          "peak_rss_mib": peak_mib()})


if __name__ == "__main__":
    main()
