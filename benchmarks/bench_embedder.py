"""Throughput of the offline embedder (sentences per second, medians of repeats), the packaged
model graph against the derived, fused one the embedder runs by default (``embedder_graph``).

    .venv/bin/python benchmarks/bench_embedder.py [--corpus PATH] [--limit 2000]
        [--repeats 3] [--batch-sizes 32] [--threads N]

Workloads: the first ``--limit`` passages of a MuSiQue-style corpus (a JSON list
of {title, text}), short QA-like sentences (the first sentence of each passage,
plus the questions file next to the corpus when present), and single uncached
queries (latency). Repeats alternate the two graphs; nothing is served from the
embedder's caches (every text runs through the model each time).
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


GRAPHS = ("packaged", "fused")


def _embedder(graph: str, batch_size: int, threads: int | None) -> OfflineEmbedder:
    """An embedder with no caches, so every text runs through the model."""
    return OfflineEmbedder(
        batch_size=batch_size, threads=threads, query_cache_size=0, document_cache_size=0,
        fused=graph == "fused",
    )  # fmt: skip


def rate(embedder: OfflineEmbedder, texts: list[str]) -> float:
    start = time.perf_counter()
    embedder.embed_documents(texts)
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-sizes", default="32")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--queries", type=int, default=200, help="single-query latency samples")
    args = parser.parse_args()

    passages, short = load_texts(args.corpus, args.limit)
    loaded: dict[str, OfflineEmbedder] = {}
    for graph in GRAPHS:
        start = time.perf_counter()
        loaded[graph] = _embedder(graph, 32, args.threads).load()
        print(
            f"model load ({graph}): {time.perf_counter() - start:.2f} s   {loaded[graph]._model.graph_path}"
        )
    base = loaded["packaged"]
    print(f"cpus: {os.cpu_count()}   intra-op threads: {base.threads}")
    for name, texts in (("passages", passages), ("short sentences", short)):
        tokens = base.count_tokens(texts)
        print(
            f"{name}: {len(texts)} texts, tokens/text median {statistics.median(tokens):.0f}, "
            f"max {max(tokens)}, truncated at 256: {sum(t == 256 for t in tokens)}"
        )
    for embedder in loaded.values():
        embedder.embed_documents(short[:64])  # warm-up

    print(f"\n{'workload':<16} {'batch':>5} {'graph':>9} {'median sent/s':>14}   runs")
    for batch_size in (int(b) for b in args.batch_sizes.split(",")):
        embedders = {}
        for graph in GRAPHS:
            embedders[graph] = _embedder(graph, batch_size, args.threads)
            embedders[graph]._model = loaded[graph]._model  # share the loaded session
        for name, texts in (("passages", passages), ("short sentences", short)):
            runs: dict[str, list[float]] = {graph: [] for graph in GRAPHS}
            for _ in range(args.repeats):  # alternating, so a noisy minute hits both graphs
                for graph in GRAPHS:
                    runs[graph].append(rate(embedders[graph], texts))
            for graph in GRAPHS:
                print(
                    f"{name:<16} {batch_size:>5} {graph:>9} {statistics.median(runs[graph]):>14.1f}   "
                    f"{', '.join(f'{r:.0f}' for r in runs[graph])}"
                )
            ratios = [f / p for f, p in zip(runs["fused"], runs["packaged"], strict=True)]
            print(f"{'':<16} {'':>5} {'fused/packaged':>24} {statistics.median(ratios):.2f}x (pair by pair)")

    for graph, embedder in loaded.items():
        latencies = []
        for query in short[: args.queries]:
            start = time.perf_counter()
            embedder.embed_query(query)
            latencies.append((time.perf_counter() - start) * 1000)
        latencies.sort()
        print(
            f"single query (uncached, {graph}): median {statistics.median(latencies):.2f} ms, "
            f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:.2f} ms over {len(latencies)} queries"
        )


if __name__ == "__main__":
    main()
