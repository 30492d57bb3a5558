"""Throughput of the offline embedder (sentences per second, medians of repeats).

    /tmp/venv/bin/python benchmarks/bench_embedder.py [--corpus PATH] [--limit 2000]
        [--repeats 3] [--batch-sizes 16,32,64] [--threads N]

Workloads: the first ``--limit`` passages of a MuSiQue-style corpus (a JSON list
of {title, text}), short QA-like sentences (the first sentence of each passage,
plus the questions file next to the corpus when present), and single uncached
queries (latency).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from pathlib import Path

from bench_support import SHARED

from engramdb.platform.embedders import OfflineEmbedder

DEFAULT_CORPUS = SHARED / "data" / "musique" / "corpus.json"


def load_texts(corpus: Path, limit: int) -> tuple[list[str], list[str]]:
    passages = [p["text"] for p in json.loads(corpus.read_text(encoding="utf-8"))[:limit]]
    short = [re.split(r"(?<=[.!?])\s", p, maxsplit=1)[0] for p in passages]
    questions = corpus.with_name("questions.json")
    if questions.is_file():
        short += [
            q["question"] for q in json.loads(questions.read_text(encoding="utf-8")) if q.get("question")
        ]
    return passages, short


def rate(embedder: OfflineEmbedder, texts: list[str], repeats: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        embedder.embed_documents(texts)
        runs.append(len(texts) / (time.perf_counter() - start))
    return statistics.median(runs), runs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-sizes", default="16,32,64")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--queries", type=int, default=200, help="single-query latency samples")
    args = parser.parse_args()

    passages, short = load_texts(args.corpus, args.limit)
    base = OfflineEmbedder(threads=args.threads, query_cache_size=0)
    start = time.perf_counter()
    base.load()
    print(
        f"model load: {time.perf_counter() - start:.2f} s   cpus: {os.cpu_count()}   intra-op threads: {base.threads}"
    )
    for name, texts in (("passages", passages), ("short sentences", short)):
        tokens = base.count_tokens(texts)
        print(
            f"{name}: {len(texts)} texts, tokens/text median {statistics.median(tokens):.0f}, "
            f"max {max(tokens)}, truncated at 256: {sum(t == 256 for t in tokens)}"
        )
    base.embed_documents(short[:64])  # warm-up

    print(f"\n{'workload':<16} {'batch':>5} {'median sent/s':>14}   runs")
    for batch_size in (int(b) for b in args.batch_sizes.split(",")):
        embedder = OfflineEmbedder(batch_size=batch_size, threads=args.threads, query_cache_size=0)
        embedder._model = base._model  # share the loaded session
        for name, texts in (("passages", passages), ("short sentences", short)):
            median, runs = rate(embedder, texts, args.repeats)
            print(f"{name:<16} {batch_size:>5} {median:>14.1f}   {', '.join(f'{r:.0f}' for r in runs)}")

    latencies = []
    for query in short[: args.queries]:
        start = time.perf_counter()
        base.embed_query(query)
        latencies.append((time.perf_counter() - start) * 1000)
    latencies.sort()
    print(
        f"\nsingle query (uncached): median {statistics.median(latencies):.2f} ms, "
        f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:.2f} ms over {len(latencies)} queries"
    )


if __name__ == "__main__":
    main()
